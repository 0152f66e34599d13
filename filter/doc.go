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
//	primary    = "(" or ")" | test | expr
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
// A test compares a field with values. The expressions of tshark 4.0 (see
// Functions and arithmetic) compare computed values and fields:
//
//	expr       = arith { relation arith }   (a < b <= c is a < b && b <= c)
//	           | arith                      (true when a value is not zero)
//	           | entity ("contains" entity | ("matches" | "~") string)
//	           | entity ["not"] "in" "{" xelement { [","] xelement } "}"
//	arith      = sum { ("&" | "bitwise_and") sum }
//	sum        = product { ("+" | "-") product }
//	product    = signed { ("*" | "/" | "%") signed }
//	signed     = ["+" | "-"] entity | "{" arith "}"
//	entity     = name [ "[" range "]" ] | function | value
//	function   = fname "(" [ arith { "," arith } ] ")"
//	fname      = "len" | "count" | "upper" | "lower" | "string" | "abs"
//	           | "max" | "min"
//	xelement   = ["+" | "-"] entity [ ".." ["+" | "-"] entity ]
//	             (a set's element: fields and functions too)
//
// & binds least, then + and -, then *, / and %, then a sign, as in
// tshark; braces group arithmetic, parentheses tests ((ddp.msn + 1) == 2
// is an error, as in tshark: write {ddp.msn + 1} * 2). A minus joined to a
// name is part of it (ddp.msn-1 is a name); write ddp.msn - 1 or
// ddp.msn -1.
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
// # Functions and arithmetic
//
// As in tshark 4.0.17, whose behaviour on the bundled captures they were
// checked against (tshark_expr_test.go):
//
//   - len(f): the octets of a string or bytes field; of a number field the
//     width of its Wireshark field (iwarp_rdma.opcode 1, iwarp_ddp.stag 4,
//     iwarp_ddp.tagged_offset 8: a key tshark has no field for has none,
//     and len of it is an error); of a boolean 0; of an address 4 or 16.
//   - count(f): how many values the record has (the elements of a list:
//     count(frames), count(findings)). A record without the field has no
//     count: count(f) == 0 is never true, as in tshark.
//   - upper(f), lower(f): a string field with its ASCII letters changed
//     (not others: tshark's upper("straße") is "STRAßE").
//   - string(f): a number field in decimal (a hexadecimal one too), or an
//     address field; tshark has no string() of the other types.
//   - abs(x), max(x, ...), min(x, ...): of numbers, times and booleans; max
//     and min of every value of every argument, which have one type (not a
//     32-bit and an 8-bit field, as tshark) and the first of which is a
//     field or a function. A field the record does not have adds nothing.
//   - len, count, upper, lower and string take a field, not an expression.
//
// Arithmetic (+ - * / %, a minus) applies to numbers, + and - also to
// relative times (frame.time_relative, frame.time_epoch), & to numbers,
// bytes (as long as the shorter operand) and addresses (ip.src &
// 255.255.255.0 == 192.0.2.0). The left side of a relation starts with a
// field or a function (1 + ddp.msn is an error, as in tshark); its first
// field gives the type the literals of the relation are read as, with its
// names of values (iwarp_rdma.opcode + 2 == send) on the right side, and
// numbers only in arithmetic. Numbers compute as tshark's: in 32 bits for
// a field of up to 32 (iwarp_rdma.opcode + 255 is 258), in 64 for wider
// ones and for keys tshark has no field for; a difference below zero is
// signed (ddp.msn - 2 == -1 for an MSN of 1), as is a negation; an
// overflow, or a division by zero, leaves no value. A relation is false
// when a field it reads is absent; values that do not compare (a negative
// number and an unsigned one) are neither equal nor unequal: so a plain
// negative number against an unsigned field matches nothing (ddp.msn > -1
// and ddp.msn ~= -1 are false, ddp.msn != -1 true), and one past a signed
// 32-bit integer for a field of up to 32 bits (ddp.msn == -2147483648) is
// an error, as in tshark. With several
// values (lists), arithmetic takes every pair, and relations keep the
// quantifiers of tests: == some pair equal, != none, === no pair unequal,
// !== some pair unequal; so != and === hold when an operation left no
// value (ddp.msn / 0 != 1).
//
// A field on the right side of a relation, in a set or after contains is
// compared with the field on the left (ddp.mo == rdmap.read.size, ddp.msn
// in {ddp.qn, 5}); a word that reads as a value of the left side is that
// value (pd == ff is the octet). Fields of compatible types compare:
// numbers of any width, booleans, strings, bytes, addresses of one family,
// times.
//
// Not supported: tshark's ${field}, the value of a field in the packet
// selected in Wireshark's window (tshark has none and matches nothing: an
// error here); a slice of a function's value (upper(f)[0:2]); len of a
// protocol (len(iwarp_mpa), the octets tshark's protocol item spans); the
// any and all prefixes and the layer operator # of tshark 4.0 (ip.src#2);
// character constants ('a').
//
// # Columns
//
// [Columns] prints the values of named fields, a line per record, for
// iwarpdump -T fields -e as tshark -T fields prints them. The names are a
// filter's names, resolved the same way, so that -e and -Y agree on what a
// name means.
package filter
