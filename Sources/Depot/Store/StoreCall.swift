/// Whether the running code is a store-level repository call that owns its transaction
/// (`store.repository(Airport.self).insert(rows)`: the call is the whole transaction).
///
/// Such a call never goes on after one of its statements fails: the transaction rolls back. So a
/// store need not guard each write of it with a savepoint (what lets a longer transaction go on
/// after a failed call), which costs two statements a write, a round trip each on PostgreSQL.
/// `SQLStore` reads it when the transaction begins and clears it for what runs inside, so a task
/// started there does not inherit it; should a write of such a call fail and something catch
/// the error and go on, the transaction refuses to commit.
package enum StoreCall {
    @TaskLocal package static var ownsTransaction = false
}
