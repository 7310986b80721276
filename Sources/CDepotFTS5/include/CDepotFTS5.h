#ifndef CDEPOTFTS5_H
#define CDEPOTFTS5_H
#include <sqlite3.h>

/// The token callback FTS5 hands a tokenizer.
typedef int (*depot_fts5_token_fn)(void *context, int flags, const char *token, int length, int start, int end);

/// The splitter the tokenizer calls for text its ASCII fast path does not take (written in Swift:
/// `TextSearch.words`). `flags` are FTS5's `FTS5_TOKENIZE_*` flags.
typedef int (*depot_fts5_split_fn)(void *context, int flags, const char *text, int length, depot_fts5_token_fn token);

/// Registers the FTS5 tokenizer `name` on `db`, splitting with `split` where the ASCII fast path
/// does not apply. Returns SQLITE_OK, or SQLITE_ERROR when the SQLite library has no FTS5.
int depot_fts5_register(sqlite3 *db, const char *name, depot_fts5_split_fn split);

/// Splits `text` as the tokenizer `name` would (mode `flags`), through the fast path where it
/// applies: for tests that compare it with `TextSearch.words`.
int depot_fts5_tokenize(depot_fts5_split_fn split, int flags, const char *text, int length, void *context,
                        depot_fts5_token_fn token);
#endif
