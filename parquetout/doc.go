// Package parquetout writes iwarpkit's decoder records as Parquet tables,
// for the engines that aggregate a fleet's captures (DuckDB, Spark, Trino):
// iwarpdump -T parquet -w DIR.
//
// Design goals:
//
//   - The JSON Lines contract, in columns. Each table's columns are the JSON
//     Lines v1 keys of its record type (docs/jsonl.md), taken from
//     format.Fields, with objects flattened into dotted names: "mpa.crc_status",
//     "ddp.stag", "rdmap.read.sink_to", "rdmap.term.code",
//     "rdmap.term.ddp.stag". A query over the tables names fields as a display
//     filter or a jq script over the JSON Lines does. Lists stay lists
//     (Parquet LIST): "frames", "mpa.rtr", and the lists of objects
//     "mpa.markers" and "findings" (LIST of STRUCT).
//   - Fixed schemas. Every file of a table has the same schema, whatever its
//     records hold (absent keys are nulls), so that a glob over many inputs
//     and shards reads as one table. A key without a column is never written
//     silently wrong: Sink.Unknown counts it, and the tests keep it at zero
//     for every record the decoder produces on the project's captures.
//   - Deterministic, idempotent output. File names depend only on the input
//     and the shard (dir/TABLE/NAME.parquet, NAME being e.g.
//     "rping.shard-3-of-8"), rows keep the decoder's deterministic order, and
//     files are renamed into place when complete: a rerun replaces its files,
//     byte for byte the same.
//   - Bounded memory. Rows go out in row groups of at most
//     Options.RowGroupRows rows (64 Ki), Snappy-compressed, string columns
//     of few distinct values dictionary-encoded, pages built in buffers of
//     Options.PageBufferSize (32 KiB). What still grows with the input is
//     the metadata of the row groups written (some 50 KB each), which
//     parquet-go keeps for the footer.
//
// Tables (one directory each): mpa (MPA Requests and Replies, RFC 5044
// §7.1), fpdus (FPDUs with their DDP and RDMAP headers, RFC 5044 §4,
// RFC 5041 §4, RFC 5040 §4), messages (RDMA messages, segments gathered,
// with Read latencies), findings and conns (connection summaries).
//
// Types: integers are INT64 (the JSON numbers are unsigned but below 2^63),
// except the 64-bit tagged offsets and Immediate Data, which are INT64 with
// the UINT(64) annotation (DuckDB UBIGINT, Spark DECIMAL(20,0)); booleans are
// BOOLEAN; strings, enums and hex byte strings are UTF-8 BYTE_ARRAY; "ts" is
// the JSON Lines RFC 3339 text with nanoseconds (DuckDB: CAST(ts AS
// TIMESTAMP_NS); Spark: to_timestamp(ts)).
//
// Connection ids ("conn") number connections in order of appearance within
// one output file; across files (inputs, shards) a connection is identified
// by its endpoints (fpdus/messages "src" and "dst", conns "initiator" and
// "responder").
package parquetout
