package limiter

import "time"

// SetClock makes l read the time from now when it throttles its error log.
func SetClock(l *Limiter, now func() time.Time) { l.now = now }
