package flows

// Local lets a Parallel worker consume records itself, in its own
// goroutine, instead of handing them to the merge to be ordered and
// emitted (issue 6). It is for a consumer whose result does not depend on
// the order of the records it takes, such as the counts of iwarpdump's -z
// tables: the records it takes never cross goroutines, and the merge has
// only the others to order.
//
// A worker offers Take every record it queues (connection-id bookkeeping
// excepted), in the order it queues them, once nothing will change the
// record any more. Take may consume only FPDU records (RecFPDU, which
// belong to TCP connections), and the message and conn records of TCP
// connections (RecMessage and RecConn, but those of SCTP associations):
// it returns true when it has, and the record is then not emitted; for
// any other record its answer is ignored. Take must not keep the record.
//
// When a TCP connection ends (at the latest at Close), the worker calls
// Flush with its own id for the connection; what Flush returns (nil:
// nothing) is handed, in the merge goroutine, to the absorb function given
// to SetLocal with the connection's id as emit sees it, at the point of
// the output where a single Decoder would emit the connection's last
// record, after every record of the connection. A connection reset that
// retires (settle.go) is flushed when it retires, and what Flush returns
// is handed on after the records emitted for it until then, but before
// those the end of the capture emits for it (its summary, and findings
// of the end): it would wait there for the end of the capture otherwise,
// some 300 octets each (a Local's result must not depend on the order of
// what it is given anyway). After Close, Flush(-1)
// returns what is left, handed to absorb with conn -1 once every record
// has been emitted.
type Local interface {
	Take(r *Record) bool
	Flush(conn int) any
}

// SetLocal gives every worker its own Local, made by newLocal (called here,
// once per worker), and the function that receives what the Locals flush,
// called from the goroutine that calls emit. It must be called before the
// first packet.
func (p *Parallel) SetLocal(newLocal func() Local, absorb func(conn int, v any)) {
	for _, w := range p.workers {
		w.dec.local = newLocal()
	}
	p.absorb = absorb
}

// SetLocal lets a single Decoder's records be taken by l as a Parallel
// worker's are: l.Take is offered every record between packets, the
// records it takes are not emitted (nor held, in frame order, for the
// messages still open: under iwarpdump -q, a long message held every
// FPDU record after its first), and what l.Flush returns for a connection
// is handed to absorb where the connection's last record is emitted (a
// retired connection's sooner, as Local says), and Flush(-1) at the end
// of Close. The output of emit, and what absorb is given, is then the same
// as a Parallel's with SetLocal. It must be called before the first
// packet.
func (d *Decoder) SetLocal(l Local, absorb func(conn int, v any)) {
	d.local, d.absorb = l, absorb
}

// takeLocal offers the records the worker queued, recs[from:], to its
// Local, in the order they were queued, and returns recs without those the
// Local took (recs[:from] were offered before). Records are offered only
// between packets: a record may still change while its packet is being
// decoded (a message adds a finding to the FPDU that broke its offsets),
// never afterwards.
func (d *Decoder) takeLocal(recs []*Record, from int) []*Record {
	kept := recs[:from]
	for _, r := range recs[from:] {
		switch r.Type {
		case recNewID, recLocal:
		case recConnEnd:
			if !r.flushed {
				// Once: a retired connection's comes again at Close.
				r.local, r.flushed = d.local.Flush(r.Conn), true
			}
		case RecFPDU:
			if d.local.Take(r) {
				if d.opts.Recycle {
					d.recycle(r)
				}
				continue
			}
		case RecConn:
			// Not recycled: the record's Summary and Interop are its
			// own.
			if d.local.Take(r) {
				continue
			}
		case RecMessage:
			// A TCP connection's messages are gathered in a msgState
			// (boxMsg); an SCTP association's are not, and it ends
			// without a Flush.
			if d.local.Take(r) && r.box == boxMsg {
				if d.opts.Recycle {
					d.recycle(r)
				}
				continue
			}
		default:
			d.local.Take(r)
		}
		kept = append(kept, r)
	}
	clear(recs[len(kept):])
	return kept
}
