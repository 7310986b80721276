#!/usr/bin/env bash
# PostgreSQL 15 comparison for issue #40 (see REPORT.md). Needs the throwaway cluster:
#   /work/main/.ci/postgres start /tmp/fts-pg > /tmp/fts-pg.env; source /tmp/fts-pg.env
# and /tmp/fts-proto/data/airports1m.csv (sqlite3 -csv /tmp/fts-proto/data/query.sqlite 'SELECT * FROM airports').
set -euo pipefail
source /tmp/fts-pg.env
CSV=/tmp/fts-proto/data/airports1m.csv
REPS=${REPS:-3}
q() { psql "$DEPOT_POSTGRES_URL" -X -q -v ON_ERROR_STOP=1 "$@"; }
# Median wall time (ms) of REPS runs of the SQL in $1 (psql \timing of the last statement), and its output.
timed() {
    local sql=$1 times=() out
    for _ in $(seq 1 "$REPS"); do
        out=$(q -At -c '\timing on' -c "$sql" 2>&1)
        times+=("$(echo "$out" | grep -oP 'Time: \K[0-9.]+' | tail -1)")
    done
    local med
    med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (REPS + 1) / 2 ))p")
    echo "$med ms (runs: ${times[*]}) -> $(echo "$out" | grep -v '^Time' | head -1)"
}
WORDS="regexp_split_to_array(lower(name), '[^[:alnum:]]+')"
q -c "CREATE EXTENSION IF NOT EXISTS pg_trgm" -c "DROP TABLE IF EXISTS airports, airport_words CASCADE" \
  -c "CREATE TABLE airports (icao text PRIMARY KEY, iata text, name text NOT NULL, city text, subd text, country text NOT NULL, elevation float8 NOT NULL, lat float8 NOT NULL, lon float8 NOT NULL, tz text, lid text)" \
  -c "CREATE TABLE airport_words (word text COLLATE \"C\" NOT NULL, key text NOT NULL, PRIMARY KEY (word, key))" \
  -c "CREATE INDEX airport_words_key ON airport_words (key)" \
  -c "CREATE OR REPLACE FUNCTION airport_words_index() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
        IF TG_OP <> 'INSERT' THEN DELETE FROM airport_words WHERE key = OLD.icao; END IF;
        IF TG_OP <> 'DELETE' THEN INSERT INTO airport_words (word, key) SELECT DISTINCT w, NEW.icao
          FROM regexp_split_to_table(lower(NEW.name), '[^[:alnum:]]+') AS w WHERE w <> '' ON CONFLICT DO NOTHING; END IF;
        RETURN NULL; END \$\$"
echo "server: $(q -At -c 'SHOW server_version')"
copy_with() {  # $1 label, $2 setup SQL (after TRUNCATE), $3 teardown SQL
    local times=()
    for _ in $(seq 1 "$REPS"); do
        q -c "$3" -c "TRUNCATE airports, airport_words" -c "VACUUM airports" >/dev/null
        q -c "$2" >/dev/null
        local t
        t=$(q -At -c '\timing on' -c "\\copy airports FROM '$CSV' CSV" | grep -oP 'Time: \K[0-9.]+')
        times+=("$t")
    done
    echo "COPY 1M $1: median $(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (REPS + 1) / 2 ))p") ms (runs: ${times[*]}); table+indexes $(q -At -c "SELECT pg_total_relation_size('airports') + pg_total_relation_size('airport_words')") bytes"
}
DROP="DROP INDEX IF EXISTS airports_gin_words, airports_trgm; DROP TRIGGER IF EXISTS airport_words_index ON airports"
copy_with "no search index" "SELECT 1" "$DROP"
copy_with "GIN over $WORDS" "CREATE INDEX airports_gin_words ON airports USING gin (($WORDS))" "$DROP"
copy_with "pg_trgm GIN over lower(name)" "CREATE INDEX airports_trgm ON airports USING gin (lower(name) gin_trgm_ops)" "$DROP"
copy_with "words table + row trigger (Depot-like)" "CREATE TRIGGER airport_words_index AFTER INSERT OR DELETE OR UPDATE OF name, icao ON airports FOR EACH ROW EXECUTE FUNCTION airport_words_index()" "$DROP"
# Builds over existing rows (the table now holds 1M rows and the words table its words: empty it first).
q -c "$DROP" -c "TRUNCATE airport_words" -c "VACUUM ANALYZE airports" >/dev/null
echo "build GIN array: $(timed "DROP INDEX IF EXISTS airports_gin_words; CREATE INDEX airports_gin_words ON airports USING gin (($WORDS))")"
echo "build pg_trgm GIN: $(timed "DROP INDEX IF EXISTS airports_trgm; CREATE INDEX airports_trgm ON airports USING gin (lower(name) gin_trgm_ops)")"
echo "build words table: $(timed "TRUNCATE airport_words; INSERT INTO airport_words SELECT DISTINCT w, icao FROM airports, regexp_split_to_table(lower(name), '[^[:alnum:]]+') AS w WHERE w <> ''")"
q -c "VACUUM ANALYZE airports" -c "VACUUM ANALYZE airport_words" >/dev/null
echo "sizes: table $(q -At -c "SELECT pg_table_size('airports')"), pk $(q -At -c "SELECT pg_relation_size('airports_pkey')"), GIN array $(q -At -c "SELECT pg_relation_size('airports_gin_words')"), trgm $(q -At -c "SELECT pg_relation_size('airports_trgm')"), words table+indexes $(q -At -c "SELECT pg_total_relation_size('airport_words')")"
# Queries. Whole words through the GIN array; word prefixes through pg_trgm (LIKE finds candidates,
# a regular expression keeps words that start with the token) and through the words table.
for query in "gard" "osl gard" "san jos" "int" "air"; do
    read -ra tokens <<<"$query"
    arr=$(printf "'%s'," "${tokens[@]}"); arr="ARRAY[${arr%,}]"
    like=""; words=""; scan=""
    for t in "${tokens[@]}"; do
        like+=" AND lower(name) LIKE '%$t%' AND lower(name) ~ '(^|[^[:alnum:]])$t'"
        words+=" AND icao IN (SELECT key FROM airport_words WHERE word LIKE '$t%')"
        scan+=" AND name ~* '(^|[^[:alnum:]])$t'"
    done
    echo "[$query] prefix, pg_trgm: $(timed "SELECT count(*) FROM airports WHERE true$like")"
    echo "[$query] prefix, words table: $(timed "SELECT count(*) FROM airports WHERE true$words")"
    echo "[$query] prefix, scan (~*): $(timed "SELECT count(*) FROM airports WHERE true$scan")"
    echo "[$query] whole words $arr, GIN @>: $(timed "SELECT count(*) FROM airports WHERE $WORDS @> $arr")"
done
for query in "gardermoen" "oslo gardermoen" "san jose" "international" "airport"; do
    read -ra tokens <<<"$query"
    arr=$(printf "'%s'," "${tokens[@]}"); arr="ARRAY[${arr%,}]"
    echo "[$query] whole words, GIN @>: $(timed "SELECT count(*) FROM airports WHERE $WORDS @> $arr")"
    echo "[$query] whole words, scan: $(timed "SELECT count(*) FROM airports WHERE ($WORDS || ARRAY[]::text[]) @> $arr AND random() >= 0")"
done
q -c "EXPLAIN SELECT count(*) FROM airports WHERE $WORDS @> ARRAY['gardermoen']" -c "EXPLAIN SELECT count(*) FROM airports WHERE lower(name) LIKE '%gard%' AND lower(name) ~ '(^|[^[:alnum:]])gard'"
