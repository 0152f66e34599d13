package main

import (
	"flag"
	"strings"
)

// getoptArgs rewrites a command line the way tcpdump's getopt reads it,
// for package flag, which stops at the first argument that is not an
// option and knows no clustered letters:
//
//   - options may follow the filter expression (tcpdump -i eth0 tcp port
//     7174 -c 10): they are moved ahead of it, the expression's words
//     keeping their order; "--" ends the options;
//   - one-letter options may be clustered and a value attached (-nn, -vv,
//     -nv, -c10, -ilo, -s0, -rcapture.pcap): "-nn" becomes "-n -n" and
//     "-c10" "-c 10", when the token is not an option of its own (-tt,
//     -mmap and -pcap are); a run of t's in a cluster is tcpdump's -tt to
//     -ttttt ("-nntt" becomes "-n -n -tt").
//
// An unknown option is left as it is, for flag to report.
func getoptArgs(fs *flag.FlagSet, args []string) []string {
	var opts, words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			words = append(words, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			words = append(words, a)
			continue
		}
		name, hasValue := strings.CutPrefix(a, "--")
		if !hasValue {
			name = a[1:]
		}
		name, _, hasValue = strings.Cut(name, "=")
		if f := fs.Lookup(name); f != nil || a[1] == '-' {
			opts = append(opts, a)
			if f != nil && !hasValue && !isBool(f) && i+1 < len(args) {
				i++
				opts = append(opts, args[i])
			}
			continue
		}
		// A cluster of one-letter options, the last perhaps with a value.
		expanded, needValue, ok := cluster(fs, a[1:])
		if !ok {
			opts = append(opts, a)
			continue
		}
		opts = append(opts, expanded...)
		if needValue && i+1 < len(args) {
			i++
			opts = append(opts, args[i])
		}
	}
	return append(opts, words...)
}

// cluster splits "nvc10" into "-n", "-v", "-c", "10": one-letter options,
// every one but the last boolean, the last taking the rest of the token
// as its value when there is a rest (needValue: there is none, the value
// is the next argument). ok is false when a letter is no option, or "="
// is in the token.
func cluster(fs *flag.FlagSet, s string) (out []string, needValue, ok bool) {
	if strings.Contains(s, "=") {
		return nil, false, false
	}
	for i := 0; i < len(s); i++ {
		// tcpdump counts t's (-tt, -ttt...): a run of them is one of
		// those options (-nntt, -ttnr FILE), not -t FORMAT.
		if n := len(s[i:]) - len(strings.TrimLeft(s[i:], "t")); n >= 2 {
			if f := fs.Lookup(s[i : i+n]); f != nil && isBool(f) {
				out = append(out, "-"+s[i:i+n])
				i += n - 1
				continue
			}
		}
		f := fs.Lookup(s[i : i+1])
		if f == nil {
			return nil, false, false
		}
		out = append(out, "-"+s[i:i+1])
		if !isBool(f) {
			if rest := s[i+1:]; rest != "" {
				return append(out, rest), false, true
			}
			return out, true, true
		}
	}
	return out, false, true
}

// isBool reports whether a flag takes no value.
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
