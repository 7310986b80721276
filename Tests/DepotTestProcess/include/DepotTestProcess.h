// The test process's own settings, made before Swift Testing reads its configuration (see
// DepotTestProcess.c). Nothing to call: linking the target is enough.
#pragma once

/// The parallelization width the test process runs with when the environment sets none.
int depot_test_process_default_width(void);

/// Makes standard output line-buffered (for a child process whose output a test reads through a pipe).
void depot_test_line_buffered_stdout(void);
