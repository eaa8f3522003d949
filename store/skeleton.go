package store

import "github.com/skilld/skilld/internal/confusable"

// NameSkeleton is the key under which two skill names count as the same
// name to a reader: the Unicode UTS #39 skeleton, which maps characters
// that look alike onto one ("pdf-tools", "pdf-tооls" with Cyrillic о and
// "pdf-tοοls" with Greek ο all share one). Workspaces hold skill names
// unique by skeleton, so a lookalike cannot sit beside the skill it
// imitates. Skeletons are keys, never shown.
func NameSkeleton(name string) string { return confusable.Skeleton(name) }
