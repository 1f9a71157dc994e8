package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/taskgate/taskgate/mapping"
	"github.com/taskgate/taskgate/tasks/token"
)

func newTokenCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Make keys for sealed task ids",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError{"token needs a subcommand\n\n" + cmd.UsageString()}
		},
	}
	var id string
	newKey := &cobra.Command{
		Use:   "new-key [--id ID]",
		Short: "Print a new token key for TASKGATE_TOKEN_KEYS",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			key := token.NewKey(id)
			if _, err := token.ParseKeys(key); err != nil {
				return usageError{"--id: " + err.Error()}
			}
			fmt.Fprintln(cmd.OutOrStdout(), key)
			return nil
		},
	}
	newKey.Flags().StringVar(&id, "id", "k1", "key id (1-16 letters, digits or '-'), written in clear inside every token")
	cmd.AddCommand(newKey)
	return cmd
}

// codec builds the task id codec from the flags: native, or sealed with keys from the flag, the
// environment, or (devKeyFile set) a key kept in a file and created on first use. Native ids need
// no key, but take the same keys when given: they key the callers in engine records.
func codec(set *mapping.Set, format, keys, devKeyFile string) (token.Codec, error) {
	if format != "native" && format != "sealed" && format != "" {
		return nil, usageError{fmt.Sprintf("--token-format %q: want sealed or native", format)}
	}
	if keys == "" {
		keys = os.Getenv("TASKGATE_TOKEN_KEYS")
	}
	if keys == "" && devKeyFile != "" {
		var err error
		if keys, err = devKey(devKeyFile); err != nil {
			return nil, err
		}
	}
	if keys == "" && format == "native" {
		return token.Native{Refs: set}, nil
	}
	if keys == "" {
		return nil, fmt.Errorf("no token key: set TASKGATE_TOKEN_KEYS or --token-keys to the output of `taskgate token new-key` (the same keys on every replica), or use --token-format native")
	}
	parsed, err := token.ParseKeys(keys)
	if err != nil {
		return nil, err
	}
	if format == "native" {
		return token.Native{Refs: set, Keys: parsed}, nil
	}
	return token.NewSealed(parsed)
}

// devKey reads the key kept in path, creating it on first use, so that a restarted `taskgate dev`
// still honours the task ids it handed out.
func devKey(path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	key := token.NewKey("dev")
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("keeping the dev token key: %w", err)
	}
	return key, nil
}
