//! What analysis gives the document: knee attributions, plateaus and
//! second looks. The analyses themselves are `memperf::analysis`.

pub mod attribution;
pub mod knees;
pub mod levels;
pub mod plateau;
pub mod second_look;
