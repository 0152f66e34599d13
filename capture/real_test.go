package capture_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/iwarpkit/iwarpkit/capture"
)

// The real siw and rxe captures are bundled in testdata (siw/, rxe/), with a
// copy of their MANIFEST.md from the project's source documents.
const (
	manifestPath = "../testdata/MANIFEST.md"
	capturesDir  = "../testdata/siw"
)

// realCaptures lists every bundled real capture (siw and rxe).
func realCaptures() []string {
	siw, _ := filepath.Glob(filepath.Join(capturesDir, "*.pcap"))
	rxe, _ := filepath.Glob("../testdata/rxe/*.pcap")
	return append(siw, rxe...)
}

// capturePath is the path of a bundled real capture by name.
func capturePath(name string) string {
	if strings.HasPrefix(name, "rxe") {
		return filepath.Join("../testdata/rxe", name)
	}
	return filepath.Join(capturesDir, name)
}

// manifestCounts parses "### name.pcap" headings and the "packets: N" line
// of each entry in MANIFEST.md.
func manifestCounts(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open(manifestPath)
	if err != nil {
		t.Fatalf("no MANIFEST of the real captures: %v", err)
	}
	defer f.Close()
	counts := map[string]int{}
	re := regexp.MustCompile(`packets: (\d+)`)
	name := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "### "); ok {
			name = strings.TrimSpace(n)
			continue
		}
		if m := re.FindStringSubmatch(line); m != nil && name != "" {
			counts[name], _ = strconv.Atoi(m[1])
		}
	}
	return counts
}

type fileStats struct {
	frames, tcp, udp, tcpBytes int
}

func readStats(t *testing.T, path string) fileStats {
	t.Helper()
	s, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var st fileStats
	for {
		p, err := s.Next()
		if err == io.EOF {
			return st
		}
		if err != nil {
			t.Fatalf("after %d frames: %v", st.frames, err)
		}
		st.frames++
		if p.Frame != uint64(st.frames) {
			t.Fatalf("frame %d numbered %d", st.frames, p.Frame)
		}
		switch p.Kind {
		case capture.KindTCP:
			st.tcp++
			st.tcpBytes += len(p.Payload)
			if p.PayloadWireLen != len(p.Payload) {
				t.Errorf("frame %d: payload %d of %d captured (snap length 262144 should keep all)", p.Frame, len(p.Payload), p.PayloadWireLen)
			}
		case capture.KindUDP:
			st.udp++
		case capture.KindBad:
			t.Errorf("frame %d: %v", p.Frame, p.Err)
		}
	}
}

// tsharkSum runs tshark on path and returns the number of frames and the
// sum of tcp.len over them.
func tsharkSum(t *testing.T, tshark, path string) (frames, tcpLen int) {
	t.Helper()
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "tcp.len").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		frames++
		if v := strings.TrimSpace(line); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("tshark tcp.len %q", v)
			}
			tcpLen += n
		}
	}
	return frames, tcpLen
}

func findTshark(t *testing.T) string {
	path, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("IWARP_REQUIRE_TSHARK") == "1" {
			t.Fatal("tshark not found and IWARP_REQUIRE_TSHARK=1")
		}
		return ""
	}
	return path
}

// TestRealCaptures reads every real siw/rxe capture: frame counts must
// match MANIFEST.md, and no frame may be undecodable.
func TestRealCaptures(t *testing.T) {
	counts := manifestCounts(t)
	files := realCaptures()
	if len(files) < 18 {
		t.Fatalf("only %d bundled real captures", len(files))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			st := readStats(t, path)
			if want, ok := counts[name]; !ok {
				t.Logf("%d frames; not in MANIFEST (TestTCPBytesAgainstTshark checks it)", st.frames)
			} else if st.frames != want {
				t.Errorf("%d frames, MANIFEST says %d", st.frames, want)
			}
			if strings.HasPrefix(name, "rxe") && st.udp == 0 {
				t.Error("rxe (RoCEv2) capture without UDP frames")
			}
			if !strings.HasPrefix(name, "rxe") && st.tcp != st.frames {
				t.Errorf("%d of %d frames TCP", st.tcp, st.frames)
			}
		})
	}
}

// TestTCPBytesAgainstTshark compares the frame count and the TCP payload
// octets (the sum of tshark's tcp.len) with tshark's reading of the same
// file: by default for an IPv4 siw, an IPv6 siw and a RoCEv2 capture
// (tshark takes seconds per file), for every capture with
// IWARP_TSHARK_ALL=1. Skipped without tshark unless IWARP_REQUIRE_TSHARK=1.
func TestTCPBytesAgainstTshark(t *testing.T) {
	tshark := findTshark(t)
	if tshark == "" {
		t.Skip("tshark not found; set IWARP_REQUIRE_TSHARK=1 to make this a failure")
	}
	files := []string{"crc_v2_rping.pcap", "siw6_rping_v2_crc.pcap", "rxe_v4_rping.pcap"}
	if os.Getenv("IWARP_TSHARK_ALL") == "1" {
		files = realCaptures()
	}
	for _, name := range files {
		path := name
		if !filepath.IsAbs(path) && filepath.Dir(path) == "." {
			path = capturePath(name)
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			st := readStats(t, path)
			frames, tcpLen := tsharkSum(t, tshark, path)
			if frames != st.frames || tcpLen != st.tcpBytes {
				t.Errorf("frames %d, TCP payload %d octets; tshark: %d, %d", st.frames, st.tcpBytes, frames, tcpLen)
			}
		})
	}
}

func TestRealCaptureGzip(t *testing.T) {
	path := capturePath("crc_v2_rping.pcap")
	gz, err := exec.LookPath("gzip")
	if err != nil {
		t.Skip("no gzip")
	}
	dst := filepath.Join(t.TempDir(), "crc_v2_rping.pcap.gz")
	out, err := exec.Command(gz, "-c", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out, 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := readStats(t, path), readStats(t, dst)
	if a != b || a.frames != 50 {
		t.Errorf("plain %+v, gzip %+v", a, b)
	}
}

// TestRealPcapng converts real captures to pcapng with Wireshark's editcap
// (adding a frame comment, an EPB option) and checks that every frame reads
// the same as from the pcap.
func TestRealPcapng(t *testing.T) {
	editcap, err := exec.LookPath("editcap")
	if err != nil {
		t.Skip("editcap not found")
	}
	for _, name := range []string{"crc_v2_rping.pcap", "siw6_rping_v2_crc.pcap", "gso_v2_nocrc_ib_write_bw_200000.pcap"} {
		t.Run(name, func(t *testing.T) {
			src := capturePath(name)
			dst := filepath.Join(t.TempDir(), name+"ng")
			if out, err := exec.Command(editcap, "-F", "pcapng", "-a", "2:a frame comment", src, dst).CombinedOutput(); err != nil {
				t.Fatalf("editcap: %v\n%s", err, out)
			}
			a, err := capture.Open(src)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := capture.Open(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			for n := 0; ; n++ {
				pa, errA := a.Next()
				pb, errB := b.Next()
				if errA != errB {
					t.Fatalf("frame %d: pcap %v, pcapng %v", n+1, errA, errB)
				}
				if errA == io.EOF {
					if n == 0 {
						t.Fatal("no frames")
					}
					return
				}
				if !pa.TS.Equal(pb.TS) || pa.Frame != pb.Frame || pa.Kind != pb.Kind || pa.Src != pb.Src ||
					pa.Seq != pb.Seq || string(pa.Payload) != string(pb.Payload) || string(pa.Data) != string(pb.Data) {
					t.Fatalf("frame %d differs:\npcap   %+v\npcapng %+v", n+1, pa, pb)
				}
			}
		})
	}
}
