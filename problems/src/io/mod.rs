//! Readers and writers (to be filled by the I/O work).
