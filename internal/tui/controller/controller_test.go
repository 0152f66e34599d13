package controller

import (
	"strings"
	"testing"
)

// TestBindingsUnique: no key is bound twice where the same context (or
// the global one) applies, so the help screen never lies about a key;
// the search prompt's keys replace the global ones while it is open.
func TestBindingsUnique(t *testing.T) {
	bs := Bindings()
	seen := map[Context]map[Key]string{}
	for _, b := range bs {
		if seen[b.Context] == nil {
			seen[b.Context] = map[Key]string{}
		}
		for _, k := range b.Keys {
			if prev, ok := seen[b.Context][k]; ok {
				t.Errorf("%s bound twice in %s: %q and %q", k.Name(), contextNames[b.Context], prev, b.Help)
			}
			// The search prompt takes keys before the global bindings.
			if b.Context != Global && b.Context != SearchPrompt {
				if prev, ok := seen[Global][k]; ok {
					t.Errorf("%s in %s hides the global %q", k.Name(), contextNames[b.Context], prev)
				}
			}
			seen[b.Context][k] = b.Help
		}
	}
}

// TestHelpText: every binding with help text is on the help screen.
func TestHelpText(t *testing.T) {
	bs := Bindings()
	h := HelpText(bs)
	for _, b := range bs {
		if b.Help != "" && !strings.Contains(h, b.Help) {
			t.Errorf("help lacks %q", b.Help)
		}
	}
	for _, c := range contextNames {
		if !strings.Contains(h, c) {
			t.Errorf("help lacks the %q heading", c)
		}
	}
}
