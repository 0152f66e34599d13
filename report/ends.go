package report

import "github.com/iwarpkit/iwarpkit/flows"

// Ends returns a flows.Local for a Collector that is given every record
// itself (Add), as iwarpdump's -z tables are when the records are also
// written (no -q): it takes no record, and what it flushes for a
// connection tells Absorb that the connection has ended, so that its row
// is packed then (rowpack.go). A connection that ends with FIN has its
// conn record then, which packs the row anyway; a reset connection that
// retires (flows/settle.go) has its conn record only at the end of the
// capture, and its row would wait for it there: 100,000 connections reset
// held 36 MB of rows to the end (MaxConns bounds their number, not their
// size). Set it with
// flows.Decoder.SetLocal or flows.Parallel.SetLocal, with Absorb.
func (c *Collector) Ends() flows.Local { return endsLocal{} }

// endsLocal is the Local Ends returns.
type endsLocal struct{}

// connEnded is what endsLocal flushes for a connection.
type connEnded struct{}

// Take takes nothing: the Collector is given every record.
func (endsLocal) Take(*flows.Record) bool { return false }

// Flush marks the end of connection conn; there is nothing to flush at the
// end of the capture (conn -1).
func (endsLocal) Flush(conn int) any {
	if conn < 0 {
		return nil
	}
	return connEnded{}
}

// ended packs the row of connection id, which has ended (Ends): its
// opcode histogram first, as its conn record would. A row already packed
// (its conn record came), or never made, is left as it is; the records of
// the connection that may still come (its conn record and findings, at the
// end of the capture) revive the row for a moment.
func (c *Collector) ended(id int) {
	cs := c.conns[id]
	if cs == nil || cs.other {
		return
	}
	cs.ops.pack(&c.opPool)
	cs.ended = true
	c.packRow(cs)
}
