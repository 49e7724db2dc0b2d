use super::harness::*;
