package main

import (
	"bufio"
	"fmt"
	"strings"
)

// ask puts a yes-or-no question on stderr and reads the answer from in:
// y or yes is yes; anything else, or no answer at all, is no, so that what
// cannot be undone happens only when someone said so.
func ask(e *env, in *bufio.Reader, question string) bool {
	fmt.Fprintf(e.stderr, "%s [y/N] ", question)
	line, err := in.ReadString('\n')
	if err != nil && line == "" {
		return false
	}
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes"
}
