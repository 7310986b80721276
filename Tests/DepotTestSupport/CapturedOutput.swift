import DepotTestProcess
import Foundation
import Synchronization

/// This process's standard output, read line by line: samples that `print` in a loop are checked
/// by what they print (line-buffered, so each line arrives when printed). For a child process of
/// its own (``SampleChild``): it takes the process's standard output for good.
public final class CapturedOutput: Sendable {
    private let reader: FileHandle
    private let pending = Mutex<[String]>([])
    private let partial = Mutex(Data())

    /// Points standard output at a pipe read by this object.
    public init() {
        let pipe = Pipe()
        dup2(pipe.fileHandleForWriting.fileDescriptor, STDOUT_FILENO)
        depot_test_line_buffered_stdout()
        reader = pipe.fileHandleForReading
    }

    /// The next line printed (waiting for it); `nil` when standard output closed.
    public func nextLine() async throws -> String? {
        if let line = pending.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return line }
        let reader = reader
        while true {
            let chunk = try await offPool { reader.availableData }
            if chunk.isEmpty { return nil }
            let lines = partial.withLock { data -> [String] in
                data.append(chunk)
                var lines: [String] = []
                while let end = data.firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: data[data.startIndex..<end], as: UTF8.self))
                    data = Data(data[(end + 1)...])
                }
                return lines
            }
            guard let first = lines.first else { continue }
            pending.withLock { $0.append(contentsOf: lines.dropFirst()) }
            return first
        }
    }
}
