// Package peers benchmarks skilld's SKILL.md hot paths side by side with the
// skills packages of two Go peers, google.golang.org/adk and
// trpc.group/trpc-go/trpc-agent-go, on the shared benchmark corpus
// (shared/bench/corpusgen). It is a module of its own so that the peers never
// enter skilld's go.mod. See README.md.
package peers
