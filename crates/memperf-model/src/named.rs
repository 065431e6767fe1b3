//! Enums whose values have names (in documents, on the command line, in
//! tables): each name is written once, in [`named_enum!`], and serde's
//! spelling, `name()`, `parse()`, `Display`, `ALL` and the list an error
//! offers all come from it.

/// An enum of unit variants, each `Variant = "name"` (and `| "alias"` for
/// other spellings `parse` takes, case-insensitively). `$what` names the
/// kind in errors: "unknown page policy '8k': use one of 4k, thp, 2m, 1g, shm".
/// The caller derives what it needs besides serde's traits.
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $E:ident ($what:literal) {
            $( $(#[$vmeta:meta])* $V:ident = $name:literal $(| $alias:literal)* ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(serde::Serialize, serde::Deserialize)]
        $vis enum $E {
            $( $(#[$vmeta])* #[serde(rename = $name)] $V, )*
        }

        impl $E {
            /// Every value, in order.
            pub const ALL: [$E; [$($name),*].len()] = [$($E::$V),*];
            /// Every value's name, in order.
            pub const NAMES: [&'static str; [$($name),*].len()] = [$($name),*];

            pub fn name(self) -> &'static str {
                match self { $($E::$V => $name,)* }
            }

            /// The value named `text` (or one of its other spellings).
            pub fn parse(text: &str) -> $crate::error::Result<$E> {
                let t = text.trim().to_ascii_lowercase();
                $( if t == $name $(|| t == $alias)* { return Ok($E::$V); } )*
                Err($crate::error::Error::usage(format!(
                    "unknown {} '{}': use one of {}",
                    $what,
                    text.trim(),
                    Self::NAMES.join(", ")
                )))
            }
        }

        impl std::fmt::Display for $E {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

#[cfg(test)]
mod tests {
    named_enum! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum Fruit ("fruit") { Apple = "apple" | "malus", Pear = "pear" }
    }

    /// One spelling each way: serde's, the name, parse (with its aliases,
    /// any case), and the error listing every name.
    #[test]
    fn a_name_is_written_once_and_read_every_way() {
        for f in Fruit::ALL {
            assert_eq!(Fruit::parse(f.name()).unwrap(), f);
            assert_eq!(serde_json::to_string(&f).unwrap(), format!("\"{f}\""));
        }
        assert_eq!(Fruit::parse(" MALUS ").unwrap(), Fruit::Apple);
        assert_eq!(Fruit::parse("plum").unwrap_err().message, "unknown fruit 'plum': use one of apple, pear");
    }
}
