//! When requests are sent. The closed loop sends whenever a connection is free; the constant rate
//! follows a schedule computed from counts (`rate`), woken by a precise timer (`timer`).

pub mod rate;
pub mod session;
pub mod timer;
