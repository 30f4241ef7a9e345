// The crate set's own (empty) library: it only holds the dependencies.
