package gc

// OpenBucket opens a remote store's bucket with a handle of the test's
// own (for the external tests).
var OpenBucket = openBucket
