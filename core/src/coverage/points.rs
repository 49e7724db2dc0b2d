//! Every coverage point, in one list: `Variant = "group.name", reach, "what passing it means";`.
//! A point that campaigns need not reach says why (`May("...")`).

use super::Decl;
#[allow(unused_imports)]
use super::Reach::{May, Must};

macro_rules! points {
    ($($id:ident = $name:literal, $reach:expr, $desc:literal;)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(u16)]
        pub enum Point { $($id),* }
        impl Point {
            pub const ALL: &'static [Point] = &[$(Point::$id),*];
        }
        pub const POINTS: &[Decl] = &[$(Decl { point: Point::$id, name: $name, reach: $reach, description: $desc }),*];
    };
}

points! {
    // ------------------------------------------------------------ maintainer: messages
    MaintainerBootstrapResponse = "maintainer.bootstrap_response", Must, "a bootstrap response reached the maintainer";
    // ------------------------------------------------------------ maintainer: end

    // ------------------------------------------------------------ dispatcher side
    DmCreateDispatcher = "dm.create_dispatcher", Must, "a dispatcher manager created a table dispatcher";
    // ------------------------------------------------------------ dispatcher side: end

    // ------------------------------------------------------------ coordinator and sink
    // ------------------------------------------------------------ coordinator and sink: end
}
