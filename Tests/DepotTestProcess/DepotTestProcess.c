// Runs when the test process loads, before Swift Testing reads its configuration.
//
// Swift Testing starts every test at once unless told otherwise. On a 2-core machine, ~700 tests
// started together starved each other for minutes: a test's own 30 s HTTP deadline, a SQLite busy
// wait of 10 s or a server's idle timeout then fired although nothing was wrong. So the process
// runs at most DEPOT_TEST_WIDTH tests at a time, unless SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH
// is set (a caller's own choice wins). `swift test` stays the whole command.
#include "DepotTestProcess.h"

#include <stdlib.h>

#ifdef __linux__
#include <signal.h>
#include <sys/prctl.h>
#endif

enum { DEPOT_TEST_WIDTH = 8 };

int depot_test_process_default_width(void) { return DEPOT_TEST_WIDTH; }

__attribute__((constructor)) static void depot_test_process_setup(void) {
#ifdef __linux__
    // A sample's child process (DEPOT_SAMPLE_CHILD, see SampleChild.swift) ends with its parent.
    if (getenv("DEPOT_SAMPLE_CHILD") != NULL) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
    }
#endif
    if (getenv("SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH") == NULL) {
        static const char width[] = {'0' + DEPOT_TEST_WIDTH, 0};
        setenv("SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH", width, 0);
    }
}

#include <stdio.h>

void depot_test_line_buffered_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }
