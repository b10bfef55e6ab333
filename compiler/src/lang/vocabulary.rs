//! `vocabulary!`: declares one family of the kernel language's names as an enum.
//!
//! Each unit variant is written once with its Rust name (`Sqrt = "sqrt"`), so the enum, its
//! `rust_name` and its `from_name` cannot drift apart. A family may also embed smaller families
//! after a `;` (`Atomic(AtomicOp)`): their names are the embedded enum's. The properties that
//! differ per variant (signature, C spelling, where it is allowed) are plain exhaustive `match`es
//! next to each declaration, so a new variant does not compile until it has them.

macro_rules! vocabulary {
    (
        $(#[$meta:meta])*
        pub enum $E:ident {
            $( $(#[$vmeta:meta])* $V:ident = $name:literal, )*
            $( ; $( $(#[$nmeta:meta])* $N:ident($Inner:ident), )* )?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $E {
            $( $(#[$vmeta])* $V, )*
            $( $( $(#[$nmeta])* $N($Inner), )* )?
        }

        impl $E {
            /// The unit variants, in declaration order (embedded families are not listed).
            pub const ALL: &'static [$E] = &[ $( $E::$V, )* ];

            /// The name a kernel writes.
            pub fn rust_name(self) -> &'static str {
                match self {
                    $( $E::$V => $name, )*
                    $( $( $E::$N(inner) => inner.rust_name(), )* )?
                }
            }

            /// The variant a kernel's name denotes; for the front end and the type checker, the
            /// phases that meet names. Later phases hold the enum.
            pub fn from_name(name: &str) -> Option<$E> {
                match name {
                    $( $name => Some($E::$V), )*
                    _ => None $( $( .or_else(|| $Inner::from_name(name).map($E::$N)) )* )?,
                }
            }
        }
    };
}
