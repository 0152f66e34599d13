package shard

// HashAny is the generic Hash, for checking the IPv4 fast path against.
var HashAny = hashAny
