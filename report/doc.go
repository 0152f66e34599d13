// Package report turns a stream of flows records into statistics and CI
// reports: the aligned text tables of iwarpdump -z (conn, ops, findings,
// latency), JUnit XML, SARIF 2.1.0 and a self-contained HTML page.
//
// Design goals:
//
//   - Bounded memory. A [Collector] aggregates as records stream past and
//     never keeps the records themselves. What it keeps grows with the number
//     of connections (capped at [MaxConns]; later connections count in the
//     totals only; some 120 octets each once ended, its row packed into
//     varints (rowpack.go; 760 kept whole), the opcode histogram kept dense
//     only while a connection is open, and the tables of a row per
//     connection are written as they are made, never held whole), the
//     number of distinct finding codes, and at most
//     [MaxFindings] individual findings (the rest are counted as dropped).
//     RDMA Read latencies go into a log-bucket histogram (relative error at
//     most 1%, see [LatencyRelErr]), throughput into at most [MaxBuckets] time
//     buckets whose width doubles as the capture grows.
//   - Deterministic output. Every table, XML and JSON document and the HTML
//     page depend only on the records added, in the order added: rows are
//     sorted (connections by id, opcodes by value, findings by severity then
//     code, a Terminate's causes and a rejection's reasons by first frame), never in map order, and
//     nothing reads the clock.
//   - Independent numbers. The tests check the counts against tshark and
//     the capture manifest, and the latencies against timestamps that tshark
//     prints, never against this package's own output.
//   - Safe rendering. All text that comes from a capture (addresses, finding
//     messages, references, titles) is escaped: html/template for the page,
//     encoding/xml and encoding/json for the reports.
//
// The collector counts the opcodes of RDMAP messages per DDP segment (RFC
// 5040 §4.1 Figure 4), the negotiated MPA parameters from the MPA
// Request/Reply (RFC 5044 §7.1, RFC 6581 §9) and RDMA Read latency from the
// Read Response message that answers a Read Request (RFC 5040 §4.4).
package report
