package pgkit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// Import is the `import --from-sqlite FILE` command every PostgreSQL
// plugin has: an operator moving from one host to several copies the
// SQLite sibling's database into an empty namespace in one transaction.
// The command line, the checks before anything is opened and the exit
// codes are the same for all; Run is each plugin's copy.
type Import struct {
	Binary string // the PostgreSQL plugin, for the usage and error lines
	What   string // what the file holds: "no <What> database at FILE"
	// FileHelp is the --from-sqlite flag's help: the sibling and where it
	// keeps the file.
	FileHelp string
	// Flags adds further flags and returns their usage text (" [--x Y]").
	Flags func(fs *flag.FlagSet) string
	// Run copies the database at from (an existing file) and returns the
	// summary printed on success. It loads the plugin's settings itself.
	Run func(ctx context.Context, from string) (summary string, err error)
}

// Main runs the command and returns the exit code: 0, 1 for a failure
// (nothing changed), 2 for bad usage.
func (im Import) Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from-sqlite", "", im.FileHelp)
	more := ""
	if im.Flags != nil {
		more = im.Flags(fs)
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *from == "" {
		fmt.Fprintf(stderr, "usage: %s import --from-sqlite FILE%s\n", im.Binary, more)
		return 2
	}
	summary, err := im.run(ctx, *from)
	if err != nil {
		fmt.Fprintf(stderr, "%s import: %v\n", im.Binary, err)
		return 1
	}
	fmt.Fprintln(stdout, summary)
	return 0
}

func (im Import) run(ctx context.Context, from string) (string, error) {
	// Opening would create a missing file (and migrate an old one in
	// place): an operator's typo must not.
	if _, err := os.Stat(from); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("no %s database at %s", im.What, from)
		}
		return "", err
	}
	return im.Run(ctx, from)
}
