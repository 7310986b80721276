#ifndef CFTS_H
#define CFTS_H
#include <sqlite3.h>

/// The token callback FTS5 hands a tokenizer.
typedef int (*cfts_token_fn)(void *pCtx, int tflags, const char *pToken, int nToken, int iStart, int iEnd);
/// The splitter a tokenizer calls (written in Swift): mode is the tokenizer's user data
/// (0 = Depot's words, 1 = Depot's words plus colocated diacritic-free forms marked with U+0001).
typedef int (*cfts_split_fn)(int mode, void *pCtx, int flags, const char *pText, int nText, cfts_token_fn xToken);

/// Registers the tokenizer `name` on `db` (mode as above); SQLITE_OK or an error code.
int cfts_register_tokenizer(sqlite3 *db, const char *name, int mode, cfts_split_fn split);

/// 1: every text goes to the Swift splitter (no ASCII fast path in C).
extern int cfts_swift_only;

/// SQLITE_TRANSIENT, which Swift cannot import (a macro casting -1).
sqlite3_destructor_type cfts_transient(void);
#endif
