package flows

import (
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
)

// A connection starts at its SYN, but most of what it needs (two
// directions with their reassembly streams, 2.3 KB) only matters once a
// second packet comes: a SYN that is never answered (a port scan, a SYN
// flood, a client retrying a dead server from new ports) has no records.
// Such connections took the table's room and memory (65,536 of them:
// some 150 MB) and, once the table was full, made it evict connections,
// each with a cap.conn_evicted finding and a row of its own in the -z
// tables.
//
// So a SYN without ACK or payload on endpoints with no connection makes an
// embryo: the connection's id (taken now, so that connections are
// numbered as before) and what the SYN says. The next packet on the same
// endpoints, whatever it is, makes the connection as the SYN would have,
// gives it the SYN, then its own packet. Until then the embryo takes some
// 200 octets. Embryos are bounded by Options.MaxConns on their own; the
// oldest goes first, without a record (a connection that only sent a SYN
// has none). A connection made from an embryo decodes exactly as one made
// at the SYN: only when the table is full does it make room later, at the
// second packet.

// embryo is a connection that has sent its SYN and nothing else.
type embryo struct {
	id       int
	frame    uint64
	sec      int64 // the SYN's time, without time.Time's pointer (prov)
	nsec     int32
	seq, ack uint32
	window   uint16
	flags    capture.TCPFlags
	fromLo   bool // the SYN came from the key's lo endpoint
}

// flatKey is a connKey without pointers (netip.Addr holds one), 38
// octets against 64, for the tables that hold many: embryos (up to
// Options.MaxConns, twice over with embryoOrder) and the endpoints of
// connections finished in the last minutes (Decoder.finished: 100,000
// connections closed within 35 seconds, 12.7 MB with connKey). A table
// without pointers is not scanned by the garbage collector either. It
// leaves out an address's zone, which no capture gives: addresses with
// one make no embryo (conceive).
type flatKey struct {
	lo, hi     [16]byte
	lport      uint16
	hport      uint16
	loV4, hiV4 bool
}

// flatKeyOf is k as a flatKey.
func flatKeyOf(k connKey) flatKey {
	return flatKey{lo: k.lo.Addr().As16(), hi: k.hi.Addr().As16(), lport: k.lo.Port(), hport: k.hi.Port(),
		loV4: k.lo.Addr().Is4(), hiV4: k.hi.Addr().Is4()}
}

// pureSYN reports whether p opens a connection with nothing else: a SYN
// without ACK, payload, FIN or RST.
func pureSYN(p *capture.Packet) bool {
	return p.Flags&(capture.FlagSYN|capture.FlagACK|capture.FlagFIN|capture.FlagRST) == capture.FlagSYN &&
		len(p.Payload) == 0 && p.PayloadWireLen == 0
}

// conceive notes the SYN p on endpoints k, which have no connection, as an
// embryo.
// It reports false, making no embryo, when an address has a zone.
func (d *Decoder) conceive(k connKey, p *capture.Packet) bool {
	if k.lo.Addr().Zone() != "" || k.hi.Addr().Zone() != "" {
		return false
	}
	for d.embryos.live >= d.maxEmbryos() {
		d.dropEmbryo()
	}
	e := embryo{id: d.newID(true), frame: p.Frame, sec: p.TS.Unix(), nsec: int32(p.TS.Nanosecond()),
		seq: p.Seq, ack: p.Ack, window: p.Window, flags: p.Flags, fromLo: p.Src == k.lo}
	d.embryos.put(flatKeyOf(k), e, d.maxEmbryos())
	return true
}

// maxEmbryos is how many embryos d keeps: Options.MaxConns, shared out
// among the workers of a Parallel (whose connection tables each have
// their own MaxConns), so that a SYN flood takes the same memory whatever
// the number of workers. (With their own MaxConns each, 400,000 SYNs took
// 55 MiB with one worker, 127 MiB with two.) A worker then forgets
// embryos a single Decoder keeps only past MaxConns/N SYNs unanswered
// at once on one worker: a flood.
func (d *Decoder) maxEmbryos() int {
	return max(1, d.opts.MaxConns/d.workers)
}

// dropEmbryo forgets the oldest embryo.
func (d *Decoder) dropEmbryo() {
	if e, ok := d.embryos.dropOldest(); ok {
		d.endEmbryo(e)
	}
}

// endEmbryo tells the merge of a Parallel that the embryo's id is done
// with, as Decoder.finish does for a connection.
func (d *Decoder) endEmbryo(e embryo) {
	if d.worker {
		r := mkRecord(recConnEnd, e.frame, time.Time{})
		r.Conn = e.id
		d.push(r)
	}
}

// born makes the connection of embryo e, taken from the table, on
// endpoints k, and gives it the SYN.
func (d *Decoder) born(k connKey, e embryo, ci int) *conn {
	src, dst := k.hi, k.lo
	if e.fromLo {
		src, dst = k.lo, k.hi
	}
	ts := time.Unix(e.sec, int64(e.nsec)).UTC()
	c := d.add(k, e.id, src, dst, e.frame, ts, ci)
	syn := capture.Packet{Frame: e.frame, TS: ts, Kind: capture.KindTCP, Src: src, Dst: dst,
		Seq: e.seq, Ack: e.ack, Flags: e.flags, Window: e.window}
	c.packet(&syn)
	return c
}

// closeEmbryos forgets the embryos left at the end of the capture. A
// Parallel worker tells its merge nothing of them: the merge's table of
// ids goes with it, and a recConnEnd record each, all queued at once in
// the last part of the round, took 28 MB for 100,000 unanswered SYNs.
func (d *Decoder) closeEmbryos() {
	d.embryos = embryoTable{}
}
