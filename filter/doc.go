// Package filter implements Wireshark-like display filters over iwarpkit
// records (the -Y option of iwarpdump).
//
// A filter is compiled once ([Compile]) and then applied to each record's
// named values, the ordered key/value list of format.Fields, whose keys are
// the names of the field registry (package dissect) and the JSON Lines
// keys (docs/jsonl.md). Design goals:
//
//   - Wireshark's syntax and semantics wherever they apply, so that a
//     filter written for tshark (with iwarp_mpa.*, iwarp_ddp.*,
//     iwarp_rdma.* names) works here and selects the same PDUs.
//   - Errors a person can act on: every compile error is a *SyntaxError
//     with the byte offset of the offending token; unknown names come with
//     the nearest known name; a value of the wrong type for its field (a
//     string for a number field, say) is a compile error, not a silent
//     mismatch.
//   - No allocation per record: names are resolved, values parsed and
//     regular expressions compiled at compile time; [Filter.Match] only
//     walks the record's key/value list.
//
// # Grammar
//
//	filter     = [ or ]                      (empty: every record matches)
//	or         = and { ("||" | "or") and }
//	and        = unary { ("&&" | "and") unary }
//	unary      = ("!" | "not") unary | primary
//	primary    = "(" or ")" | test
//	test       = name [ "[" range "]" ] [ relation value
//	                  | "contains" value
//	                  | ("matches" | "~") string
//	                  | ["not"] "in" set ]
//	relation   = "==" | "eq" | "any_eq" | "!=" | "ne" | "all_ne"
//	           | "===" | "all_eq" | "!==" | "~=" | "any_ne"
//	           | "<" | "lt" | "<=" | "le" | ">" | "gt" | ">=" | "ge"
//	range      = i ":" n | i "-" j | i | ":" n | i ":"
//	             (a slice of a bytes field, as Wireshark's: n octets from
//	             offset i, offsets i to j, one octet, the first n, from i to
//	             the end; a negative offset counts from the end; a record
//	             whose value the range runs past has no value)
//	set        = "{" element { [","] element } "}"
//	element    = value [ ".." value ]
//	value      = number | boolean | bytes | string
//	number     = ["-"] ( decimal | "0x" hex | "0b" binary | "0" octal )
//	             (a leading 0 means octal, as in Wireshark: 010 is 8)
//	boolean    = "true" | "false" (also True, TRUE, False, FALSE, and in
//	             double quotes; and for boolean fields any number: 0 is
//	             false, others true); false is less than true
//	bytes      = hex octets separated by ":", "-" or "." (69:77:74) or
//	             not (697774), one octet (7a, 0x7a), or a string (its octets)
//	string     = '"' chars '"'  with \" \\ \n \t \xHH \OOO escapes
//	           | 'r"' chars '"' (raw: backslashes kept)
//
// A number field with names for its values in tshark (values.go:
// iwarp_rdma.opcode, the Terminate's per-layer fields, the atomic opcode)
// also takes a value's name, in double quotes or, for a name of one word,
// without, in any case: iwarp_rdma.opcode == "Read Request",
// iwarp_rdma.term_layer == ddp.
//
// Precedence, highest first: ! (not), && (and), || (or); "a || b && c"
// is "a || (b && c)", as in Wireshark. Keywords are lowercase.
//
// # Names
//
// A name is a registry name (ddp.stag, rdmap.term.code, mpa.crc_status) or
// one of its Wireshark aliases (iwarp_ddp.stag, iwarp_rdma.opcode); String
// prints the registry name. A few Wireshark names have the value tshark
// gives them rather than the registry field's (wire.go): iwarp_mpa.crc_check
// and iwarp_mpa.crc are the CRC field read most significant octet first,
// with CRC32c negotiated or not; iwarp_mpa.res has S in it; iwarp_ddp.rsvd
// and iwarp_rdma.rsv are 0 on a header whose record has no ddp.rsvd or
// rdmap.rsvd. Also accepted:
//
//   - the keys of message and conn records that the registry does not
//     name: opcode, name, segments, length, first_frame, last_frame, stag,
//     to, qn, msn, request_frame, latency_ns (message); initiator,
//     responder, state, ddp_version, interop, midstream, fpdus, messages,
//     octets, crc_errors, retransmissions, zero_windows, stalls,
//     stalled_ns, cut_segments, mpa.markers_i2r, mpa.markers_r2i, mpa.rejected, mpa.p2p
//     (conn);
//   - members of the terminated headers in a Terminate, named like the
//     top-level fields: rdmap.term.ddp.stag, rdmap.term.rdmap.opcode, ...;
//   - members of list entries: findings.code, mpa.markers.ok, ...;
//   - the endpoint fields of Wireshark, taken from the endpoints of the
//     packets a record was decoded from: ip.src, ip.dst, ip.addr (IPv4),
//     ipv6.src, ipv6.dst, ipv6.addr, tcp.srcport, tcp.dstport, tcp.port,
//     sctp.srcport, sctp.dstport, sctp.port. An address value is an
//     address or a CIDR subnet (ip.addr == 192.0.2.0/24); ranges in sets
//     run between addresses ({192.0.2.1..192.0.2.9}). Which records have
//     them: see endpoints.go. In short, the records of a TCP connection
//     have tcp.* ports, those of DDP over SCTP sctp.* ports, a conn record
//     only the .addr and .port fields (either end), and finding records
//     none (ip.addr == 192.0.2.1 || finding keeps them).
//   - the protocols of those fields, ip, ipv6 and tcp, tested for
//     presence: a record has ip when it has ip.addr, tcp when tcp.port.
//   - tcp.stream, Wireshark's number of the TCP conversation: every
//     record of a TCP connection has it, findings and the conn record
//     included (flows.Record.TCPStream; flows/streams.go says where it
//     can differ from Wireshark's).
//   - the time fields of Wireshark's frame protocol: frame.time_relative
//     (seconds since the first packet, Filter.WithRef), frame.time_epoch
//     (seconds since the epoch), both with up to nine decimals, and
//     frame.time (a date in double quotes); a record's time is that of its
//     first frame (times.go).
//
// An unknown name is a compile error.
//
// A few conn record keys are not reachable because their names already
// belong to wire fields: the members rev, crc, enhanced, ird, ord and rtr of
// conn's mpa object (mpa.rev is the MPA Request/Reply revision, mpa.crc the
// FPDU's CRC field), and conn's findings count (findings is the list of
// findings attached to an FPDU). A key holding a value of another type than
// the field's (conn's boolean mpa.crc) is not the field: mpa.crc is never
// true for a conn record.
//
// # Record types
//
// A bare record-type name is true for records of that kind:
//
//	mpa      an MPA-layer record: an MPA Request/Reply (type mpa) or an
//	         FPDU (type fpdu); Wireshark's iwarp_mpa
//	ddp      an FPDU whose DDP header was decoded (iwarp_ddp)
//	rdmap    an FPDU whose RDMAP header was decoded (iwarp_rdma)
//	fpdu, message, finding, conn, cm, sctp_session
//	         records of that type (the same as type == "fpdu", ...)
//
// A cm record's msg is its CM message (msg == "rej"); on the other
// records msg is a finding's text.
//
// Note that a bare conn is the record type, while conn == 2 compares the
// connection id every record has.
//
// # Semantics
//
// A bare field name is true when the record has the field. As in
// Wireshark this holds for boolean fields too: ddp.l is true for every
// decoded FPDU, last or not; write ddp.l == 1 (or == true) for the flag.
//
// A filter tests one record, one PDU, where tshark tests a frame: in a
// frame that holds several FPDUs (synth/mss-span.pcap's frame 16: the end
// of an RDMA Write, then Sends), tshark's iwarp_ddp.tagged_flag == 1 &&
// iwarp_rdma.opcode == 3 is true of the frame, the flag of one FPDU and
// the opcode of another; here it is true of no record.
//
// A comparison is false when the record does not have the field, so
// rdmap.opcode != 3 selects FPDUs with another opcode, not every other
// record. When a field has several values (a list such as frames or
// enhanced.rtr, or the findings attached to an FPDU) == and the other
// relations are true when any value passes; != is true when no value is
// equal (Wireshark's all_ne), === when all are equal, !== when some value
// differs, and "not in" when no value is in the set. "not in" is the one
// exception to the first rule: as in tshark 4.0, f not in {...} is
// !(f in {...}), true for a record without the field (ddp.qn not in {1}
// selects conn records too; ddp && ddp.qn not in {1} does not).
//
// The finding keys severity, code, msg and ref (and their aliases
// finding.severity, ...) are read both from finding records and from the
// findings attached to fpdu and mpa records: finding.severity == "error"
// matches an error finding record and any FPDU that carries an error
// finding.
//
// contains tests for a substring (strings) or a sequence of octets (bytes:
// pd contains 69:77 or pd contains "iw"). matches applies a Go regular
// expression (RE2 syntax) to a string field, case-insensitive by default as
// in Wireshark; start the pattern with (?-i) to make it case-sensitive.
// Strings compare by octets, numbers by value (signed values such as
// latency_ns included).
//
// # Columns
//
// [Columns] prints the values of named fields, a line per record, for
// iwarpdump -T fields -e as tshark -T fields prints them. The names are a
// filter's names, resolved the same way, so that -e and -Y agree on what a
// name means.
package filter
