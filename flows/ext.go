package flows

import "github.com/iwarpkit/iwarpkit/capture"

// extState is the decoder state of the transports other than MPA over TCP:
// InfiniBand CM over RoCEv2 and DDP over SCTP (not decoded yet).
type extState struct{}

// otherPacket handles a packet that is not TCP.
func (d *Decoder) otherPacket(p *capture.Packet) {}

// closeExt ends the non-TCP transports at the end of the capture.
func (d *Decoder) closeExt() {}
