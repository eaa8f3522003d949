package importer

import "time"

// SetBackoff shortens the retry delay so that tests of retries stay fast.
func SetBackoff(g *GitHub, d time.Duration) { g.backoff = d }
