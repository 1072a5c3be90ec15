//! The one definition of what a columnar frame is, stamped out per kind.
//!
//! Four kinds times a dozen-plus columns would otherwise be four hand-kept
//! copies of the same getters, row builder and push; a single macro keeps
//! them identical. A frame owns one `Vec` per column, all the same length
//! (the only way to add rows is the crate-private `extend_rows`), so a writer
//! can read a whole column as a slice and a row by index.

macro_rules! columnar_frame {
    (
        $(#[$frame_meta:meta])*
        frame $frame:ident;
        $(#[$row_meta:meta])*
        row $row:ident;
        columns {
            $( $(#[$col_meta:meta])* $col:ident : $ty:ty, )+
        }
    ) => {
        $(#[$row_meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $row {
            $( $(#[$col_meta])* pub $col: $ty, )+
        }

        $(#[$frame_meta])*
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        pub struct $frame {
            rows: usize,
            $( $col: Vec<$ty>, )+
        }

        impl $frame {
            /// An empty frame with room for `rows` rows in every column, so
            /// finalisation allocates each column once.
            pub(crate) fn with_capacity(rows: usize) -> Self {
                Self {
                    rows: 0,
                    $( $col: Vec::with_capacity(rows), )+
                }
            }

            /// Appends rows, one column at a time; the only way rows are
            /// added, which is what keeps the columns the same length.
            /// Column by column, each append is one tight copy loop with
            /// one capacity check, where a row at a time would check and
            /// grow every column for every row.
            pub(crate) fn extend_rows(&mut self, rows: &[$row]) {
                $( self.$col.extend(rows.iter().map(|row| row.$col)); )+
                self.rows += rows.len();
            }

            /// Number of rows (every column has this length).
            pub fn len(&self) -> usize {
                self.rows
            }

            pub fn is_empty(&self) -> bool {
                self.rows == 0
            }

            /// Row `index` gathered from every column, or `None` past the end.
            pub fn row(&self, index: usize) -> Option<$row> {
                (index < self.rows).then(|| $row {
                    $( $col: self.$col[index], )+
                })
            }

            /// Every row in order, gathered from the columns.
            pub fn rows(&self) -> impl ExactSizeIterator<Item = $row> + '_ {
                (0..self.rows).map(move |index| $row {
                    $( $col: self.$col[index], )+
                })
            }

            $(
                $(#[$col_meta])*
                pub fn $col(&self) -> &[$ty] {
                    &self.$col
                }
            )+
        }
    };
}

pub(crate) use columnar_frame;
