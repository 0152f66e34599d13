package filter

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iwarpkit/iwarpkit/capture"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// tsharkCase is a filter applied by iwarpkit and by tshark to the same
// capture. ours is the iwarpkit filter ("" = the same text as ws, which
// then uses Wireshark's names, our aliases). When field is set, the number
// of matching records must equal the number of occurrences of value in
// tshark's -e field output (one occurrence per PDU); in every case the set
// of frames tshark selects must equal the frames our matching MPA and FPDU
// records are attributed to (the frame completing them, as in tshark).
type tsharkCase struct {
	file         string
	ws, ours     string
	field, value string
}

var tsharkCases = []tsharkCase{
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_rdma.opcode == 2", field: "iwarp_rdma.opcode", value: "0x02"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_rdma.opcode == 2", ours: "rdmap.opcode == 2", field: "iwarp_rdma.opcode", value: "0x02"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_rdma.opcode == 1", ours: "rdmap.opcode eq 0x1", field: "iwarp_rdma.opcode", value: "0x01"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_rdma.opcode == 3", ours: `rdmap.name == "Send"`, field: "iwarp_rdma.opcode", value: "0x03"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_rdma.opcode in {1, 2}", ours: "rdmap.opcode in {1 2}"},
	// tshark's names of values (valueNames), in any case, quoted or not.
	{file: "crc_v2_rping.pcap", ws: `iwarp_rdma.opcode == "Send"`, field: "iwarp_rdma.opcode", value: "0x03"},
	// Private data: none in tshark when PD_Length is 0 (a record's pd is
	// empty then), sliced like a bytes field.
	{file: "../synth/rev1-crc.pcap", ws: "iwarp_mpa && !iwarp_mpa.privatedata"},
	{file: "../synth/reject.pcap", ws: "iwarp_mpa.privatedata"},
	{file: "../synth/reject.pcap", ws: "iwarp_mpa.privatedata[0:1] == 00"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_mpa.privatedata[0:2] == 00:01"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_rdma.opcode == send", ours: "rdmap.opcode == SEND", field: "iwarp_rdma.opcode", value: "0x03"},
	{file: "crc_v2_rping.pcap", ws: `iwarp_rdma.opcode in {"Read Request", "read response"}`},
	{file: "crc_v2_rping.pcap", ws: `iwarp_rdma.opcode > "Read Response"`},
	{file: "../synth/terminate-ddp.pcap", ws: `iwarp_rdma.term_layer == DDP && iwarp_rdma.term_etype_ddp == "Tagged Buffer Error" && iwarp_rdma.term_errcode_ddp_tagged == "invalid stag"`},
	{file: "../synth/terminate-llp.pcap", ws: `iwarp_rdma.term_errcode_llp == "MPA CRC Error" && iwarp_rdma.term_etype_llp == "MPA Error"`},
	{file: "../synth/rfc7306.pcap", ws: `iwarp_rdma.atomic.opcode == "CmpSwap"`},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_rdma.opcode in {1..2}", ours: "rdmap.opcode >= 1 && rdmap.opcode le 2"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_ddp.tagged_flag == 1", field: "iwarp_ddp.tagged_flag", value: "1"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_ddp.tagged_flag == True", ours: "ddp.t == true", field: "iwarp_ddp.tagged_flag", value: "1"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_ddp.last_flag == 0", ours: "ddp.l == false", field: "iwarp_ddp.last_flag", value: "0"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_ddp.last_flag", ours: "ddp.l"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_ddp.last_flag < 1", ours: "ddp.l < true"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: `iwarp_ddp.last_flag >= "True" && iwarp_ddp.tagged_flag in {0..1}`},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_ddp.qn == 1", ours: "ddp.qn == 1", field: "iwarp_ddp.qn", value: "1"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_ddp.qn == 0 and iwarp_ddp.msn > 10", ours: "ddp.qn == 0 && ddp.msn gt 10"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_rdma.rdmardsz == 4096", ours: "rdmap.read.size == 4096", field: "iwarp_rdma.rdmardsz", value: "4096"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_mpa.ulpdulength > 1000", ours: "mpa.ulpdu_len > 1000"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_mpa", ours: "mpa"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_ddp", ours: "ddp"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_ddp_rdmap", ours: "ddp"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_ddp_rdmap"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_rdma", ours: "rdmap"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_mpa.rev == 2", ours: "mpa.rev == 2 && kind == \"request\" || rev == 2 && mpa.kind == \"reply\""},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_mpa.privatedata == 00:80:00:80", ours: "pd == 00:80:00:80"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_mpa.privatedata == 00800080", ours: "pd == 00800080"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_mpa.privatedata[2:] == 00:80 && iwarp_mpa.privatedata[-1] == 80 && iwarp_mpa.privatedata[1-2] == 80:00"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_mpa.privatedata[0:2] != 00:80"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_mpa.privatedata[3:] && !iwarp_mpa.privatedata[4:]"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_mpa.privatedata [-2:1] == 00"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "iwarp_mpa.privatedata contains 0080 && iwarp_mpa.privatedata > 0000"},
	{file: "basic_ib_send_bw_64_v2_nocrc.pcap", ws: "iwarp_rdma.opcode == 0", ours: "rdmap.opcode == 0", field: "iwarp_rdma.opcode", value: "0x00"},
	{file: "basic_ib_send_bw_64_v2_nocrc.pcap", ws: "iwarp_rdma.opcode == 3", field: "iwarp_rdma.opcode", value: "0x03"},
	{file: "basic_ib_send_bw_64_v2_nocrc.pcap", ws: "iwarp_ddp.tagged_flag == 1 && iwarp_ddp.last_flag == 1", ours: "ddp.t == 1 and ddp.l == 1"},
	{file: "gso_v2_nocrc_ib_write_bw_200000.pcap", ws: "iwarp_rdma.opcode == 0", ours: "rdmap.opcode == 0", field: "iwarp_rdma.opcode", value: "0x00"},
	{file: "gso_v2_nocrc_ib_write_bw_200000.pcap", ws: "iwarp_mpa.ulpdulength >= 60000", ours: "mpa.ulpdu_len >= 60000"},
	{file: "gso_v2_nocrc_ib_write_bw_200000.pcap", ws: "iwarp_ddp", ours: "ddp"},
	{file: "gso_v2_nocrc_ib_write_bw_200000.pcap", ws: "iwarp_mpa", ours: "mpa"},
	{file: "crc_v2_iwtest_ops.pcap", ws: "iwarp_mpa.crc_flag == 1", ours: "c == true", field: "iwarp_mpa.crc_flag", value: "1"},
	{file: "crc_v2_iwtest_ops.pcap", ws: `iwarp_mpa.privatedata contains "iwtest"`, ours: `pd contains "iwtest"`},
	{file: "crc_v2_iwtest_ops.pcap", ws: `iwarp_mpa.privatedata contains 73:65:72:76:65:72`, ours: `mpa.pd contains 73:65:72:76:65:72`},
	{file: "crc_v2_iwtest_ops.pcap", ws: "iwarp_rdma.opcode in {1, 2}", ours: "rdmap.opcode in {1..2}"},
	{file: "crc_v2_iwtest_ops.pcap", ws: "iwarp_ddp.stag", ours: "ddp.stag"},
	{file: "crc_v2_iwtest_ops.pcap", ws: "iwarp_ddp.msn", ours: "ddp.msn"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_rdma.opcode == 1", ours: "rdmap.opcode == 1 && ddp.qn == 1 && ddp.mo == 0 && ddp.l == 1", field: "iwarp_rdma.opcode", value: "0x01"},
	{file: "mpareq_markers.pcap", ws: "iwarp_mpa.marker_flag == 1", ours: "m == 1", field: "iwarp_mpa.marker_flag", value: "1"},
	{file: "reject_app_v2.pcap", ws: "iwarp_mpa.rej_flag == 1", ours: "r == 1", field: "iwarp_mpa.rej_flag", value: "1"},
	{file: "reject_app_v2.pcap", ws: "iwarp_mpa.pdlength > 4", ours: "pd_len > 4"},
	{file: "term_sendinv.pcap", ws: "iwarp_rdma.inval_stag", ours: "rdmap.inval_stag"},
	{file: "term_sendinv.pcap", ws: "iwarp_rdma.opcode == 6", ours: "rdmap.opcode == 6 && rdmap.inval_stag == 0", field: "iwarp_rdma.opcode", value: "0x06"},
	{file: "term_sendinv.pcap", ws: "iwarp_rdma.opcode == 7", ours: "rdmap.term", field: "iwarp_rdma.opcode", value: "0x07"},
	// The Terminate names the rejected RDMA Write: tshark gives its STag as
	// iwarp_ddp.stag == 0x07bf1600 in frame 10 (tshark 4.0 does not show the
	// terminated header itself, siw's control word layout hides it).
	{file: "term_badwrite.pcap", ws: "iwarp_rdma.opcode == 7", ours: "rdmap.term.layer == 1 && rdmap.term.ddp.stag == 0x07bf1600 && rdmap.term.rdmap.opcode == 0"},
	{file: "term_badwrite.pcap", ws: "iwarp_ddp.stag == 0x07bf1600", ours: "ddp.stag == 0x07bf1600"},
	{file: "p2p_rtr1_rping.pcap", ws: "iwarp_ddp.stag == 1 && iwarp_mpa.ulpdulength == 14", ours: "ddp.stag == 1 && mpa.ulpdu_len == 14"},
	{file: "p2p_rtr2_rping.pcap", ws: "iwarp_rdma.rdmardsz == 0", ours: "rdmap.read.size == 0 && rdmap.read.src_stag == 1"},
	// not in is !(in): tshark 4.0 selects the MPA Request and Reply, which
	// have no MSN, too (it had selected the FPDUs only).
	{file: "crc_v2_rping.pcap", ws: "iwarp_ddp.msn not in {1, 2} && iwarp_mpa", ours: "ddp.msn not in {1, 2} && mpa"},
	{file: "crc_v2_rping.pcap", ws: "!(iwarp_ddp.msn in {1, 2}) && iwarp_mpa", ours: "ddp.msn not in {1..2} && mpa"},
	{file: "crc_v2_rping.pcap", ws: "ip.src not in {192.0.2.1} && iwarp_rdma", ours: "ip.src not in {192.0.2.1} && rdmap"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_ddp.msn ~= 1", ours: "ddp.msn !== 1"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_ddp.msn ~= 1"},
	// A negative number for an unsigned field is a signed integer in
	// tshark, which compares with none of the field's values.
	{file: "crc_v2_rping.pcap", ws: "iwarp_ddp && !(iwarp_ddp.msn > -1)", ours: "ddp && !(ddp.msn > -1)"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_ddp && !(iwarp_ddp.msn < -1 || iwarp_ddp.msn == -2147483647)"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_ddp.msn != -1", ours: "ddp.msn ne -1"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_ddp.msn == 1 && !(iwarp_ddp.msn ~= -1 || iwarp_ddp.msn in {-1..5})"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_ddp.msn >= -0 && !(tcp.srcport > -5 || tcp.stream == -1)"},
	{file: "crc_v2_rping.pcap", ws: "tcp.stream != -1 && iwarp_ddp.msn ~= 1"},
	// The fields tshark shows in another form than the records hold them
	// (wire.go): the CRC field read most significant octet first, as
	// crc_check where CRC32c was negotiated (good or bad) and as crc where
	// it was not; the reserved bits of MPA's flags octet with S, and of
	// the DDP and RDMAP control octets, 0 included.
	{file: "crc_v2_rping.pcap", ws: "iwarp_mpa.crc_check == 0x42c513dc", field: "iwarp_mpa.crc_check", value: "0x42c513dc"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_mpa.crc_check && !iwarp_mpa.crc", ours: "iwarp_mpa.crc_check && !iwarp_mpa.crc && fpdu"},
	{file: "../synth/terminate-llp.pcap", ws: "iwarp_mpa.crc_check == 0xf15c8ff8", ours: "iwarp_mpa.crc_check == 0xf15c8ff8 && mpa.crc_status == \"bad\""},
	{file: "../synth/terminate-llp.pcap", ws: "iwarp_mpa.crc_check > 0x80000000"},
	{file: "basic_rping_v2_nocrc.pcap", ws: "iwarp_mpa.crc == 0 && !iwarp_mpa.crc_check", ours: "iwarp_mpa.crc == 0 && !iwarp_mpa.crc_check && mpa.crc_status == \"unchecked\""},
	{file: "crc_v2_rping.pcap", ws: "iwarp_mpa.res == 0x10", ours: "iwarp_mpa.res == 0x10 && s == 1 && res == 0"},
	{file: "nocrc_v1_rping.pcap", ws: "iwarp_mpa.res == 0"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_ddp.rsvd == 0 && iwarp_rdma.rsv == 0", field: "iwarp_ddp.rsvd", value: "0x00"},
	{file: "crc_v2_iwtest_ops.pcap", ws: "iwarp_ddp.rsvd", ours: "iwarp_ddp.rsvd && !ddp.rsvd"},
	// Wireshark's header subtrees, tested for presence.
	{file: "crc_v2_rping.pcap", ws: "iwarp_mpa.req"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_mpa.rep || iwarp_mpa.key.req"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_mpa.key.rep"},
	{file: "crc_v2_rping.pcap", ws: "iwarp_mpa.fpdu", ours: "fpdu"},
	{file: "crc_v2_iwtest_ops.pcap", ws: "iwarp_ddp.tagged"},
	{file: "crc_v2_iwtest_ops.pcap", ws: "iwarp_ddp.untagged && !iwarp_ddp.tagged"},
	{file: "crc_v2_iwtest_ops.pcap", ws: "iwarp_ddp.control_field && iwarp_rdma.control_field"},
	{file: "../synth/terminate-rdmap.pcap", ws: "iwarp_rdma.term_ctrl"},
	{file: "../synth/terminate-ddp.pcap", ws: "iwarp_rdma.term_hdrct && iwarp_ddp.untagged"},
	// The terminated RDMA header is there when R is set: not in a DDP
	// error's Terminate, which has the terminated DDP header only.
	{file: "../synth/terminate-ddp.pcap", ws: "iwarp_rdma.terminate && !iwarp_rdma.term_rdma_h && iwarp_rdma.term_ddp_h", ours: "rdmap.term && !iwarp_rdma.term_rdma_h && rdmap.term.rdmap && iwarp_rdma.term_ddp_h"},
	{file: "../synth/terminate-rdmap.pcap", ws: "iwarp_rdma.term_rdma_h"},
	// Atomic fields named by operation (atomicAliases).
	{file: "../synth/rfc7306.pcap", ws: "iwarp_rdma.atomic.swap_data == 7 && iwarp_rdma.atomic.compare_data == 42"},
	{file: "../synth/rfc7306.pcap", ws: "iwarp_rdma.atomic.add_data == 5 && !iwarp_rdma.atomic.swap_mask"},
	// The endpoint fields (endpoints.go), IPv4 and IPv6, with subnets,
	// sets and ranges, selecting the same frames as tshark's ip.*, ipv6.*
	// and tcp.* fields.
	{file: "basic_rping_v2_nocrc.pcap", ws: "ip.src == 192.0.2.2 && iwarp_ddp", ours: "ip.src == 192.0.2.2 && ddp"},
	{file: "basic_rping_v2_nocrc.pcap", ws: "tcp.srcport == 7174 && iwarp_rdma", ours: "tcp.srcport == 7174 && rdmap"},
	{file: "basic_rping_v2_nocrc.pcap", ws: "ip && tcp && !ipv6 && iwarp_rdma", ours: "ip && tcp && !ipv6 && rdmap"},
	{file: "siw6_rping_v2_crc.pcap", ws: "ipv6 && !ip && tcp && iwarp_mpa", ours: "ipv6 && !ip && tcp && mpa"},
	{file: "siw6_rping_v2_crc.pcap", ws: "ipv6.src == 2001:db8::2 && iwarp_ddp", ours: "ipv6.src == 2001:db8::2 && ddp"},
	{file: "siw6_rping_v2_crc.pcap", ws: "ipv6.addr == 2001:db8::/64 && iwarp_mpa", ours: "ipv6.addr == 2001:db8::/64 && mpa"},
	{file: "reject_app_v2.pcap", ws: "ip.addr == 192.0.2.0/24 && iwarp_mpa.rej_flag == 1", ours: "ip.addr == 192.0.2.0/24 && r == 1"},
	{file: "crc_v2_rping.pcap", ws: "tcp.dstport != 7174 && iwarp_ddp", ours: "tcp.dstport != 7174 && ddp"},
	{file: "crc_v2_rping.pcap", ws: "ip.dst in {192.0.2.2} && iwarp_rdma.opcode == 1", ours: "ip.dst in {192.0.2.2} && rdmap.opcode == 1", field: "iwarp_rdma.opcode", value: "0x01"},
	{file: "crc_v2_rping.pcap", ws: "tcp.port in {7174} && iwarp_mpa", ours: "tcp.port in {7174} && mpa"},
	{file: "crc_v2_rping.pcap", ws: "ip.addr in {192.0.2.2..192.0.2.9} && iwarp_ddp", ours: "ip.addr in {192.0.2.2..192.0.2.9} && ddp"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "tcp.dstport == 18515 && iwarp_rdma.opcode == 1", ours: "tcp.dstport == 18515 && rdmap.opcode == 1", field: "iwarp_rdma.opcode", value: "0x01"},
	// tcp.stream: the ib_*_bw tests' captures have a TCP connection of
	// their own before the iWARP one (flows/streams.go).
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "tcp.stream == 1 && iwarp_rdma.opcode == 1", ours: "tcp.stream == 1 && rdmap.opcode == 1", field: "iwarp_rdma.opcode", value: "0x01"},
	{file: "basic_ib_send_bw_64_v2_nocrc.pcap", ws: "tcp.stream in {1} && iwarp_mpa", ours: "tcp.stream in {1} && mpa"},
	{file: "gso_v2_nocrc_ib_write_bw_200000.pcap", ws: "tcp.stream != 0 && iwarp_ddp", ours: "tcp.stream != 0 && ddp"},
	// Wireshark's per-layer Terminate fields exist for Terminates of that
	// layer (and DDP error type) only (termAliases).
	{file: "../synth/terminate-rdmap.pcap", ws: "iwarp_rdma.terminate && !iwarp_rdma.term_errcode_ddp_tagged && !iwarp_rdma.term_etype_ddp", ours: "rdmap.term && !iwarp_rdma.term_errcode_ddp_tagged && !iwarp_rdma.term_etype_ddp"},
	{file: "../synth/terminate-rdmap.pcap", ws: "iwarp_rdma.term_errcode_rdma == 0 && iwarp_rdma.term_etype_rdma == 1"},
	{file: "../synth/terminate-ddp.pcap", ws: "iwarp_rdma.term_errcode_ddp_tagged == 0 && !iwarp_rdma.term_errcode_ddp_untagged && !iwarp_rdma.term_etype_rdma"},
	{file: "../synth/terminate-llp.pcap", ws: "iwarp_rdma.term_errcode_llp == 2 && iwarp_rdma.term_etype_llp == 0 && !iwarp_rdma.term_errcode_ddp_untagged"},
	// The time fields (times.go): a record's time is its first frame's,
	// the frame tshark shows an FPDU of one frame in; frame.time's dates
	// are local for tshark, run with TZ=UTC, and UTC (Z) for us.
	{file: "crc_v2_rping.pcap", ws: "frame.time_relative >= 0.0334 && frame.time_relative < 0.039 && iwarp_ddp", ours: "frame.time_relative >= 0.0334 && frame.time_relative < 0.039 && ddp"},
	{file: "crc_v2_rping.pcap", ws: "frame.time_relative == 0.037283 && iwarp_ddp", ours: "frame.time_relative == 0.037283000 && ddp"},
	{file: "crc_v2_rping.pcap", ws: "frame.time_epoch > 1795313467.745 && iwarp_rdma.opcode == 1", ours: "frame.time_epoch > 1795313467.745 && rdmap.opcode == 1", field: "iwarp_rdma.opcode", value: "0x01"},
	{file: "basic_ib_read_bw_4096_v2_nocrc.pcap", ws: "frame.time_relative in {0.02 .. 0.03} && iwarp_ddp", ours: "frame.time_relative in {0.02..0.03} && ddp"},
	{file: "term_badwrite.pcap", ws: `frame.time >= "Nov 22, 2026 02:13:22.19" && iwarp_ddp`, ours: `frame.time >= "2026-11-22 02:13:22.19Z" && ddp`},
	{file: "term_badwrite.pcap", ws: `frame.time < "2026-11-22 02:13:22.19" && iwarp_mpa`, ours: `frame.time < "Nov 22, 2026 02:13:22.19 UTC" && mpa`},
}

// tsharkFrames runs tshark -Y expr on a capture and returns the frames it
// selects, in order, and for each the values of field (if set) that tshark
// -T fields prints.
func tsharkFrames(t *testing.T, tshark, path, expr, field string) ([]uint64, [][]string) {
	t.Helper()
	args := []string{"-r", path, "-Y", expr, "-T", "fields", "-e", "frame.number"}
	if field != "" {
		args = append(args, "-e", field)
	}
	cmd := exec.Command(tshark, args...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("tshark %v: %v %s", args, err, msg)
	}
	var frames []uint64
	var values [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		fr, err := strconv.ParseUint(cols[0], 10, 64)
		if err != nil {
			t.Fatalf("tshark line %q", line)
		}
		frames = append(frames, fr)
		var vs []string
		if len(cols) > 1 {
			vs = strings.Split(cols[1], ",")
		}
		values = append(values, vs)
	}
	return frames, values
}

// ourFrames returns the frames of the records f matches, as tshark shows
// them: an MPA or FPDU record in the frame that completes it (its last),
// sorted, each once; and how many records matched. A match of another
// record type (a message, a conn record) fails the test: tshark's frames
// have none.
func ourFrames(t *testing.T, f *Filter, rs []rec) ([]uint64, int) {
	t.Helper()
	var frames []uint64
	n := 0
	for _, r := range rs {
		if !f.MatchRecord(r.r) {
			continue
		}
		n++
		switch r.r.Type {
		case flows.RecFPDU:
			frames = append(frames, r.r.FPDU.Frames[len(r.r.FPDU.Frames)-1])
		case flows.RecMPA:
			frames = append(frames, r.r.MPA.Frames[len(r.r.MPA.Frames)-1])
		default:
			t.Errorf("%q matched a %v record (frame %d)", f, r.r.Type, r.r.Frame)
		}
	}
	slices.Sort(frames)
	return slices.Compact(frames), n
}

// firstTime returns the time of a capture's first packet.
func firstTime(t *testing.T, path string) time.Time {
	t.Helper()
	src, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var p capture.Packet
	if err := src.NextInto(&p); err != nil {
		t.Fatal(err)
	}
	return p.TS
}

func TestTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	for _, c := range tsharkCases {
		ours := c.ours
		if ours == "" {
			ours = c.ws
		}
		t.Run(c.file+"/"+ours, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "siw", c.file)
			wantFrames, values := tsharkFrames(t, tshark, path, c.ws, c.field)
			want := 0
			for _, vs := range values {
				for _, v := range vs {
					if v == c.value || c.value == "1" && v == "True" || c.value == "0" && v == "False" {
						want++
					}
				}
			}
			f := mustCompile(t, ours).WithRef(firstTime(t, path))
			gotFrames, got := ourFrames(t, f, siw(t, c.file))
			if !slices.Equal(gotFrames, wantFrames) {
				t.Errorf("%q selects frames %v, tshark -Y %q selects %v", ours, gotFrames, c.ws, wantFrames)
			}
			if c.field != "" && got != want {
				t.Errorf("%q matches %d records, tshark has %d occurrences of %s == %s", ours, got, want, c.field, c.value)
			}
			if len(wantFrames) == 0 {
				t.Errorf("tshark selects nothing: the case tests nothing")
			}
		})
	}
}
