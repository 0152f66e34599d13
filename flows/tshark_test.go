package flows_test

import (
	"fmt"
	"math/bits"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// tsharkFPDU is tshark's view of one FPDU: the frame it attributes the FPDU
// to (the frame that completes it) and the fields compared.
type tsharkFPDU struct {
	frame    uint64
	ulen     string
	opcode   string
	tagged   string
	last     string
	stag, to string
	qn, msn  string
	mo       string
	crcGood  bool   // tshark's "Good CRC32" (iwarp_mpa.crc_check present)
	crcField string // iwarp_mpa.crc (CRC off, or bad)
	crcMixed bool   // the frame mixes good and other CRCs: not compared
}

var tsharkFields = []string{"frame.number", "iwarp_mpa.ulpdulength", "iwarp_rdma.opcode", "iwarp_ddp.tagged_flag",
	"iwarp_ddp.last_flag", "iwarp_mpa.crc_check", "iwarp_mpa.crc",
	"iwarp_ddp.stag", "iwarp_ddp.tagged_offset", "iwarp_ddp.qn", "iwarp_ddp.msn", "iwarp_ddp.mo"}

// runTshark decodes a capture with tshark and returns its FPDUs in order.
func runTshark(t *testing.T, tshark, path string) []tsharkFPDU {
	t.Helper()
	args := []string{"-r", path, "-Y", "iwarp_ddp", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=|"}
	for _, f := range tsharkFields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(tshark, args...).Output()
	if err != nil {
		t.Fatalf("tshark %s: %v", path, err)
	}
	var res []tsharkFPDU
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		for len(cols) < len(tsharkFields) {
			cols = append(cols, "")
		}
		split := func(i int) []string {
			if cols[i] == "" {
				return nil
			}
			return strings.Split(cols[i], "|")
		}
		frame, _ := strconv.ParseUint(cols[0], 10, 64)
		ulens, ops, tg, ls := split(1), split(2), split(3), split(4)
		good, crcs := split(5), split(6)
		stags, tos, qns, msns, mos := split(7), split(8), split(9), split(10), split(11)
		ti, ui := 0, 0
		for i := range ops {
			f := tsharkFPDU{frame: frame, opcode: ops[i], tagged: at(tg, i), last: at(ls, i), ulen: at(ulens, i)}
			if f.tagged == "1" || f.tagged == "True" {
				f.stag, f.to = at(stags, ti), at(tos, ti)
				ti++
			} else {
				f.qn, f.msn, f.mo = at(qns, ui), at(msns, ui), at(mos, ui)
				ui++
			}
			res = append(res, f)
		}
		// tshark gives iwarp_mpa.crc_check for a good CRC and iwarp_mpa.crc
		// otherwise; when a frame mixes both the order is lost, so such
		// frames are not compared for CRC.
		first := len(res) - len(ops)
		switch {
		case len(good) == len(ops):
			for i := first; i < len(res); i++ {
				res[i].crcGood = true
			}
		case len(crcs) == len(ops):
			for i := first; i < len(res); i++ {
				res[i].crcField = crcs[i-first]
			}
		default:
			for i := first; i < len(res); i++ {
				res[i].crcMixed = true
			}
		}
	}
	return res
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

func hex32(v uint32) string { return fmt.Sprintf("0x%08x", v) }

// TestTsharkDifferential decodes real siw captures with iwarpkit and with
// tshark and compares every FPDU: opcode, DDP flags and fields, ULPDU_Length
// and the CRC verdict. tshark's values are the oracle.
func TestTsharkDifferential(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	files, _ := filepath.Glob("../testdata/siw/*.pcap")
	if len(files) == 0 {
		t.Fatal("no captures in testdata/siw")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := runTshark(t, tshark, path)
			recs := testutil.OfType(testutil.Decode(t, path, flows.Options{}), flows.RecFPDU)
			// tshark attributes an FPDU to the frame that completes it.
			type keyed struct {
				last uint64
				r    *flows.FPDURecord
			}
			var got []keyed
			for _, r := range recs {
				got = append(got, keyed{r.FPDU.Frames[len(r.FPDU.Frames)-1], r.FPDU})
			}
			// Stable order by completing frame, then stream order within it.
			for i := 1; i < len(got); i++ {
				for j := i; j > 0 && got[j].last < got[j-1].last; j-- {
					got[j], got[j-1] = got[j-1], got[j]
				}
			}
			if len(got) != len(want) {
				t.Fatalf("FPDUs: iwarpkit %d, tshark %d", len(got), len(want))
			}
			for i, w := range want {
				g := got[i]
				f := g.r
				s := f.Seg
				if g.last != w.frame {
					t.Errorf("FPDU %d: completing frame %d, tshark %d", i, g.last, w.frame)
				}
				check := func(name, gv, wv string) {
					if gv != wv {
						t.Errorf("frame %d FPDU %d: %s = %s, tshark %s", w.frame, i, name, gv, wv)
					}
				}
				check("ulpdu_len", strconv.Itoa(int(f.ULPDULen)), w.ulen)
				check("opcode", fmt.Sprintf("0x%02x", uint8(s.Opcode)), w.opcode)
				check("tagged", b01(s.DDP.T), norm(w.tagged))
				check("last", b01(s.DDP.L), norm(w.last))
				if s.DDP.T {
					check("stag", hex32(s.DDP.STag), w.stag)
					check("to", fmt.Sprintf("0x%016x", s.DDP.TO), w.to)
				} else {
					check("qn", strconv.FormatUint(uint64(s.DDP.QN), 10), w.qn)
					check("msn", strconv.FormatUint(uint64(s.DDP.MSN), 10), w.msn)
					check("mo", strconv.FormatUint(uint64(s.DDP.MO), 10), w.mo)
				}
				if w.crcMixed {
					continue
				}
				switch f.CRCStatus {
				case flows.CRCOK:
					if !w.crcGood {
						t.Errorf("frame %d FPDU %d: CRC ok, tshark did not find a good CRC32 (field %s)", w.frame, i, w.crcField)
					}
				case flows.CRCUnchecked, flows.CRCBad:
					if w.crcGood {
						t.Errorf("frame %d FPDU %d: CRC %v, tshark says good", w.frame, i, f.CRCStatus)
					}
					// tshark reads the field big-endian; the wire order is
					// least significant octet first (RFC 5044 §4.1).
					check("crc", hex32(bits.ReverseBytes32(f.CRC)), w.crcField)
				default:
					t.Errorf("frame %d FPDU %d: CRC status %v in a complete capture", w.frame, i, f.CRCStatus)
				}
			}
		})
	}
}

func b01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func norm(s string) string {
	switch s {
	case "True", "true":
		return "1"
	case "False", "false":
		return "0"
	}
	return s
}

// TestCRCBadAsTshark: the values of mpa.crc_bad are the ones tshark shows
// for the same FPDU ("CRC check: 0x... (Bad CRC32, should be 0x...)"),
// the CRC field and the CRC of the octets as sent.
func TestCRCBadAsTshark(t *testing.T) {
	tshark := testutil.RequireTshark(t)
	path := "../testdata/synth/terminate-llp.pcap"
	out, err := exec.Command(tshark, "-r", path, "-V").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]string{}
	var frame uint64
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Frame ") {
			frame, _ = strconv.ParseUint(strings.TrimSuffix(strings.Fields(l)[1], ":"), 10, 64)
		}
		if i := strings.Index(l, "CRC check: "); i >= 0 && strings.Contains(l, "Bad CRC32, should be ") {
			f := strings.Fields(l[i:])
			want[frame] = "CRC32c mismatch: the CRC field is " + f[2] + ", the FPDU's octets give " +
				strings.TrimSuffix(f[len(f)-1], ")") + " (as sent on the wire, first octet first)"
		}
	}
	if len(want) == 0 {
		t.Fatal("tshark shows no bad CRC")
	}
	got := map[uint64]string{}
	for _, r := range testutil.Decode(t, path, flows.Options{}) {
		if r.Type == flows.RecFPDU {
			for _, f := range r.FPDU.Findings {
				if f.Code == "mpa.crc_bad" {
					got[r.Frame] = f.Msg
				}
			}
		}
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("frame %d:\n got %q\nwant %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d crc_bad findings, tshark has %d bad CRCs", len(got), len(want))
	}
}
