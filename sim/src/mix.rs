//! splitmix64's finalizer: spreads consecutive inputs (seeds, node numbers) over the whole
//! `u64` range, for choices that must follow from the seed without drawing from a random
//! stream (a draw would move every later value of that stream).

/// The golden-ratio increment splitmix64 adds before mixing.
pub const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// splitmix64's output function.
pub fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
