//! The running trace hash (FNV-1a, 64 bit): same seed, same hash, bit for bit.

#[derive(Clone, Copy, Debug)]
pub struct TraceHash(pub u64);

impl Default for TraceHash {
    fn default() -> Self {
        TraceHash(0xcbf2_9ce4_8422_2325)
    }
}

impl TraceHash {
    pub fn bytes(&mut self, b: &[u8]) {
        for x in b {
            self.0 ^= *x as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    pub fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
        self.bytes(&[0xff]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn hash_depends_on_order() {
        let (mut a, mut b) = (TraceHash::default(), TraceHash::default());
        a.str("x");
        a.str("y");
        b.str("y");
        b.str("x");
        assert_ne!(a.0, b.0);
    }
}
