// Package flows tracks iWARP connections in a packet stream and turns their
// bytes into records: MPA Request/Reply frames, FPDUs with their DDP and
// RDMAP headers, gathered RDMA messages, findings and connection summaries.
//
// Each TCP direction is reassembled by package reassembly into an ordered
// byte stream in which every octet has a 64-bit stream offset and its
// absolute TCP sequence number. A per-direction state machine then reads the
// MPA Request or Reply (RFC 5044 §7.1), learns which directions carry markers
// (the Request's M bit governs responder->initiator, the Reply's M bit
// initiator->responder) and whether CRC32c is in use (either C bit), and
// frames FPDUs on the 512-octet marker grid anchored at the first FPDU octet
// (RFC 5044 §5.1). FPDUs may span or share TCP segments.
//
// After lost data (a gap) or when the handshake was not captured, the
// direction resynchronises: at the next marker when markers are in use,
// otherwise on a chain of consistent FPDU headers, confirmed by CRC32c when it
// validates. A candidate found by scanning is reported only once confirmed.
//
// Records come out in frame order (the frame holding a record's first octet),
// deterministically: records are held in a small ordering queue until no
// direction has unfinished octets from an earlier frame. Memory is bounded by
// the number of open connections times the per-direction limits (the
// reassembly buffer and one FPDU), never by the capture's size: a connection
// that closes (both FINs acknowledged, or a reset before any octet) is
// summarised and dropped at once, its storage kept for the next one, and the
// note of its endpoints that absorbs a FIN or ACK sent again lasts a few
// minutes of capture time (strayWindow).
//
// Other transports (ext.go): InfiniBand CM over RoCEv2 (UDP 4791) and in
// native InfiniBand captures (LINKTYPE_INFINIBAND, endpoints as LIDs and
// GIDs), tied by communication ID into exchanges; DDP over SCTP (RFC 5043).
//
// Speed (issue 6): a Decoder keeps no state shared across connections but
// the id counter, so Parallel spreads connections over workers and merges
// their records into exactly the order, and the ids, one Decoder gives
// (parallel.go). Options.Recycle reuses FPDU records when the consumer
// keeps nothing of them.
package flows
