package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/iwarpkit/iwarpkit/dissect"
	"github.com/iwarpkit/iwarpkit/dissect/rdmap"
	"github.com/iwarpkit/iwarpkit/flows"
	"github.com/iwarpkit/iwarpkit/internal/testutil"
)

// byID returns the element with the given id, or nil.
func byID(n *html.Node, id string) *html.Node {
	if n.Type == html.ElementNode {
		for _, a := range n.Attr {
			if a.Key == "id" && a.Val == id {
				return n
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := byID(c, id); f != nil {
			return f
		}
	}
	return nil
}

// textOf returns the text content of n, cells separated by spaces.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode && (n.Data == "td" || n.Data == "th" || n.Data == "tr") {
			b.WriteString(" ")
		}
	}
	walk(n)
	return b.String()
}

// elements returns the elements named tag under n.
func elements(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// checkSelfContained fails when the page could load anything: scripts,
// stylesheets, images, frames, objects, or URLs in attributes or CSS.
func checkSelfContained(t *testing.T, doc *html.Node, raw string) {
	t.Helper()
	for _, tag := range []string{"script", "link", "img", "iframe", "object", "embed", "image", "use", "audio", "video", "source", "base"} {
		if n := elements(doc, tag); len(n) > 0 {
			t.Errorf("page has <%s>", tag)
		}
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for _, a := range n.Attr {
			if k := strings.ToLower(a.Key); k == "src" || k == "href" || k == "xlink:href" || k == "style" || strings.HasPrefix(k, "on") {
				t.Errorf("<%s %s=%q>", n.Data, a.Key, a.Val)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, s := range elements(doc, "style") {
		if css := textOf(s); strings.Contains(css, "url(") || strings.Contains(css, "@import") {
			t.Errorf("CSS loads something: %s", css)
		}
	}
	if strings.Contains(strings.ReplaceAll(raw, `xmlns="http://www.w3.org/2000/svg"`, ""), "://") {
		t.Errorf("page mentions a URL")
	}
}

func renderHTML(t *testing.T, c *Collector, title string) (string, *html.Node) {
	t.Helper()
	var b bytes.Buffer
	if err := c.WriteHTML(&b, title); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return b.String(), doc
}

func TestHTMLStructure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		conns   int
		want    []string // in the connection and findings tables
		latency bool
		dirs    []string // throughput series
	}{
		{"term_badwrite", 1, []string{"192.0.2.1:60847", "192.0.2.1:7471", "closed", "rdmap.terminate", "RFC 5040 §4.8"}, false, []string{"s-i2r", "s-r2i"}},
		{"basic_rping_v2_nocrc", 1, []string{"192.0.2.2:36789", "192.0.2.1:7174", "no findings"}, true, []string{"s-i2r", "s-r2i"}},
		{"basic_ib_read_bw_4096_v2_nocrc", 2, []string{"128/128"}, true, []string{"s-i2r", "s-r2i"}},
		{"mpareq_rev3", 1, []string{"mpa.rev_unknown"}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := collect(t, tc.name)
			raw, doc := renderHTML(t, c, tc.name)
			checkSelfContained(t, doc, raw)
			ct := byID(doc, "conn-table")
			ft := byID(doc, "findings-table")
			if ct == nil || ft == nil {
				t.Fatal("no connection or findings table")
			}
			if rows := elements(ct, "tr"); len(rows) != 1+tc.conns {
				t.Errorf("connection table has %d rows, want header + %d", len(rows), tc.conns)
			}
			text := textOf(ct) + textOf(ft)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("tables lack %q: %s", w, text)
				}
			}
			if ch := byID(doc, "throughput-chart"); (ch != nil) != (tc.dirs != nil) {
				t.Errorf("throughput chart present %v, want %v", ch != nil, tc.dirs != nil)
			} else if ch != nil {
				var classes []string
				for _, p := range elements(ch, "path") {
					classes = append(classes, attr(p, "class"))
				}
				for _, d := range tc.dirs {
					if !strings.Contains(strings.Join(classes, " "), d) {
						t.Errorf("no %s series in %v", d, classes)
					}
				}
				if len(elements(ch, "text")) < 6 {
					t.Errorf("throughput chart has too few labels")
				}
			}
			lc := byID(doc, "latency-chart")
			if (lc != nil) != tc.latency {
				t.Fatalf("latency chart present %v, want %v", lc != nil, tc.latency)
			}
			if lc != nil {
				var n int
				for _, r := range elements(lc, "rect") {
					if attr(r, "class") == "bar" {
						n++
					}
				}
				if n == 0 {
					t.Error("latency chart without bars")
				}
			}
		})
	}
}

// TestHTMLEscapes checks that text from the capture cannot inject markup.
func TestHTMLEscapes(t *testing.T) {
	c := NewCollector()
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>"'&amp;`
	c.Add(fpduRec(0, 1, 0, flows.DirI2R, rdmap.OpSend, 10))
	c.Add(findingRec(0, 2, dissect.SeverityError, "x.<b>code</b>", evil))
	raw, doc := renderHTML(t, c, "title "+evil)
	checkSelfContained(t, doc, raw)
	if got := textOf(elements(doc, "title")[0]); got != "title "+evil {
		t.Errorf("<title> %q", got)
	}
	if got := textOf(elements(doc, "h1")[0]); got != "title "+evil {
		t.Errorf("<h1> %q", got)
	}
	if !strings.Contains(textOf(byID(doc, "findings-table")), evil) || !strings.Contains(textOf(byID(doc, "finding-list")), "x.<b>code</b>") {
		t.Errorf("finding text not shown verbatim")
	}
	if len(elements(doc, "b")) != 0 {
		t.Errorf("markup from the capture became elements")
	}
}

// TestHTMLEmpty renders a page without any record.
func TestHTMLEmpty(t *testing.T) {
	raw, doc := renderHTML(t, NewCollector(), "empty")
	checkSelfContained(t, doc, raw)
	for _, s := range []string{"no iWARP connections", "no findings", "no FPDUs", "no RDMA Read Response"} {
		if !strings.Contains(raw, s) {
			t.Errorf("empty page lacks %q", s)
		}
	}
}

// requireChromium returns the path of Chromium, skipping the test when it
// is missing, or failing when IWARP_REQUIRE_CHROMIUM=1 (CI).
func requireChromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("IWARP_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium is required (IWARP_REQUIRE_CHROMIUM=1) but not found (apt-get install chromium)")
	}
	t.Skip("chromium not installed: skipping the headless rendering test (apt-get install chromium)")
	return ""
}

// runChromium runs headless Chromium with a fresh profile and returns its
// standard output.
func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.WaitDelay = 10 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

// TestHTMLChromium renders report pages in headless Chromium: the DOM
// Chromium builds must hold the connection table and the findings, and the
// screenshot must show the page (text and the chart colours). The PNG stays
// in the test's temporary directory (its path is logged); set
// IWARP_SCREENSHOT_DIR to keep a copy.
func TestHTMLChromium(t *testing.T) {
	bin := requireChromium(t)
	for _, tc := range []struct {
		name string
		want []string
	}{
		{"term_badwrite", []string{"192.0.2.1:60847", "192.0.2.1:7471", "closed", "rdmap.terminate", "error"}},
		{"basic_rping_v2_nocrc", []string{"192.0.2.2:36789", "192.0.2.1:7174", "1/1", "no findings"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := collect(t, tc.name)
			dir := t.TempDir()
			page := filepath.Join(dir, tc.name+".html")
			f, err := os.Create(page)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.WriteHTML(f, "iwarpkit report: "+tc.name); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			url := "file://" + page

			dom := runChromium(t, bin, "--dump-dom", url)
			doc, err := html.Parse(bytes.NewReader(dom))
			if err != nil {
				t.Fatalf("dumped DOM: %v", err)
			}
			ct, ft := byID(doc, "conn-table"), byID(doc, "findings-table")
			if ct == nil || ft == nil {
				t.Fatalf("Chromium's DOM lacks the connection or findings table:\n%.2000s", dom)
			}
			text := textOf(ct) + " " + textOf(ft) + " " + textOf(doc)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("rendered page lacks %q", w)
				}
			}
			if byID(doc, "throughput-chart") == nil {
				t.Error("rendered page lacks the throughput chart")
			}

			shot := filepath.Join(dir, tc.name+".png")
			runChromium(t, bin, "--screenshot="+shot, "--window-size=1280,2000", "--hide-scrollbars", url)
			t.Logf("screenshot: %s", shot)
			data, err := os.ReadFile(shot)
			if err != nil {
				t.Fatalf("no screenshot: %v", err)
			}
			if d := os.Getenv("IWARP_SCREENSHOT_DIR"); d != "" {
				if err := os.WriteFile(filepath.Join(d, tc.name+".png"), data, 0o644); err != nil {
					t.Error(err)
				}
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("screenshot is not a PNG: %v", err)
			}
			checkScreenshot(t, img)
		})
	}
}

// checkScreenshot checks that the page was painted: 1280x2000, dark text,
// and both series colours of the throughput chart (#1f6feb and #d9480f,
// as lines or as their 25% fills on white).
func checkScreenshot(t *testing.T, img image.Image) {
	t.Helper()
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 2000 {
		t.Errorf("screenshot %v, want 1280x2000", b)
	}
	var dark, blue, orange int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			switch {
			case r < 80 && g < 80 && bl < 80:
				dark++
			case bl > 200 && r < 120 && g > 90 && g < 150, bl > 230 && r > 190 && r < 210 && g > 210 && g < 225:
				blue++
			case r > 200 && g > 60 && g < 90 && bl < 40, r > 240 && g > 200 && g < 215 && bl > 190 && bl < 205:
				orange++
			}
		}
	}
	t.Logf("%d dark, %d blue, %d orange pixels", dark, blue, orange)
	if dark < 2000 || blue < 100 || orange < 100 {
		t.Errorf("screenshot looks empty: %d dark, %d blue, %d orange pixels", dark, blue, orange)
	}
}

// TestHTMLTCPColumns: the connection table's last five cells are the conn
// record's TCP health (flows.TCPHealth), as -z conn prints them: a
// generated capture with retransmissions and one cut by the snap length.
func TestHTMLTCPColumns(t *testing.T) {
	for _, f := range []string{"../testdata/synth/retransmit-conflict.pcap", "../testdata/synth/snaplen.pcap"} {
		c := NewCollector()
		want := map[string][]string{}
		for _, r := range testutil.Decode(t, f, flows.Options{}) {
			c.Add(r)
			if r.Type == flows.RecConn {
				h := r.Summary.TCP
				want[strconv.Itoa(r.Conn)] = []string{strconv.Itoa(h.Retransmissions), strconv.Itoa(h.ZeroWindows),
					strconv.Itoa(h.Stalls), strconv.FormatFloat(h.Stalled.Seconds(), 'f', 6, 64), strconv.Itoa(h.Cut)}
			}
		}
		_, doc := renderHTML(t, c, f)
		rows := elements(byID(doc, "conn-table"), "tr")
		if len(rows) != 1+len(want) {
			t.Fatalf("%s: %d rows for %d conn records", f, len(rows), len(want))
		}
		nonzero := false
		for _, tr := range rows[1:] {
			td := elements(tr, "td")
			var got []string
			for _, c := range td[len(td)-5:] {
				got = append(got, strings.TrimSpace(textOf(c)))
			}
			w := want[strings.TrimSpace(textOf(td[0]))]
			if strings.Join(got, " ") != strings.Join(w, " ") {
				t.Errorf("%s conn %s: TCP cells %v, conn record %v", f, textOf(td[0]), got, w)
			}
			nonzero = nonzero || got[0] != "0" || got[4] != "0"
		}
		if !nonzero {
			t.Errorf("%s: no retransmission or cut segment to show", f)
		}
	}
}
