package flows

import "sort"

// TCP stream numbers (Record.TCPStream). Wireshark numbers every TCP
// conversation of a capture from 0 in the order of its first packet
// (tcp.stream), and starts a new one when a SYN opens the endpoints of
// one again. Connection ids are numbered the same way, and a TCP
// connection's id is allocated at its first packet too, a SYN left
// unanswered and a connection that never speaks MPA included; so the
// stream of a TCP connection is its id less the ids before it that went
// to connections of other transports (CM exchanges, SCTP associations).
// A capture of iWARP alone has stream == id.
//
// Where the two numberings part, Wireshark (4.0) starting a new stream
// only at a SYN whose sequence number is not the one its sender's side of
// the conversation began with:
//   - octets without a SYN on the endpoints of a closed connection, a
//     connection idle past settle.go's limit after a reset, and one closed
//     early when the connection table is full, are a new connection here
//     and the same stream in Wireshark; so is a SYN with the sequence
//     number of the closed connection's own;
//   - a SYN with a new sequence number on a connection that has not
//     closed is a new stream in Wireshark and the same connection here.

// streamNums keeps the connection ids that are not TCP, in runs of
// consecutive ids, so that the stream of a TCP connection's id is the id
// less the ids in runs below it. Memory: one run per stretch of other
// transports' connections between two TCP ones (none in a capture of
// iWARP alone).
type streamNums struct {
	runs []idRun // ascending
}

// idRun is the ids from to to-1, none of them TCP, and how many ids below
// from are not TCP either.
type idRun struct {
	from, to, before int
}

// add notes id, the next connection id (ids come in ascending order), and
// whether it is a TCP connection's.
func (s *streamNums) add(id int, tcp bool) {
	if tcp {
		return
	}
	if n := len(s.runs); n > 0 && s.runs[n-1].to == id {
		s.runs[n-1].to++
		return
	}
	before := 0
	if n := len(s.runs); n > 0 {
		last := s.runs[n-1]
		before = last.before + last.to - last.from
	}
	s.runs = append(s.runs, idRun{id, id + 1, before})
}

// of returns the TCP stream of connection id plus one, or 0 when id is
// not a TCP connection's (or is negative).
func (s *streamNums) of(id int) int32 {
	if id < 0 {
		return 0
	}
	n := len(s.runs)
	if n == 0 {
		return int32(id + 1)
	}
	if last := s.runs[n-1]; id >= last.to {
		return int32(id - last.before - (last.to - last.from) + 1)
	}
	// The first run that ends above id.
	i := sort.Search(n, func(i int) bool { return s.runs[i].to > id })
	r := s.runs[i]
	if id >= r.from {
		return 0
	}
	return int32(id - r.before + 1)
}

// TCPStream returns the record's TCP stream number, Wireshark's
// tcp.stream (see streams.go for where the two differ), and false for a
// record of another transport: a CM exchange, DDP over SCTP.
func (r *Record) TCPStream() (int, bool) {
	return int(r.stream) - 1, r.stream > 0
}

// SetTCPStream sets the record's TCP stream number, for records made
// outside a Decoder (tests); a negative n makes it none.
func (r *Record) SetTCPStream(n int) {
	r.stream = int32(max(n+1, 0))
}
