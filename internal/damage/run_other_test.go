//go:build !linux

package damage_test

import (
	"context"
	"os/exec"
	"testing"
)

// buildWrapper: no wrapper off Linux; peak memory is not measured.
func buildWrapper(*testing.T, string, string) string { return "" }

type measured struct {
	rssKiB, floorKiB int64
	status           string
}

// command runs bin directly.
func command(ctx context.Context, _, bin string, args []string) (*exec.Cmd, func() measured, error) {
	return exec.CommandContext(ctx, bin, args...), func() measured { return measured{} }, nil
}
