//! Shared vocabulary of every stage: item ids (`fish:K`, `coin:K`), poses in table
//! millimetres, frame indices. Owns no behaviour beyond parsing and printing these.
//! Uses: serde only.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Index of a video frame, 0-based. Seconds are `frame as f64 / fps`.
pub type FrameIdx = u64;

/// Index of a player in move order, 0-based.
pub type PlayerIdx = usize;

/// What an item is: every player owns one fish (tag) and one coin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemKind {
    Fish,
    Coin,
}

/// An item id as written in every file: `fish:K` or `coin:K`, K = owner's player index.
///
/// Ordered by owner first, then fish before coin: the put-back order of R10/R9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ItemId {
    pub kind: ItemKind,
    pub owner: PlayerIdx,
}

impl ItemId {
    pub const fn fish(owner: PlayerIdx) -> Self {
        ItemId {
            kind: ItemKind::Fish,
            owner,
        }
    }
    pub const fn coin(owner: PlayerIdx) -> Self {
        ItemId {
            kind: ItemKind::Coin,
            owner,
        }
    }
    pub fn is_fish(&self) -> bool {
        self.kind == ItemKind::Fish
    }
    pub fn is_coin(&self) -> bool {
        self.kind == ItemKind::Coin
    }
}

impl PartialOrd for ItemId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ItemId {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.owner, self.kind).cmp(&(other.owner, other.kind))
    }
}

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ItemKind::Fish => "fish",
            ItemKind::Coin => "coin",
        };
        write!(f, "{kind}:{}", self.owner)
    }
}

/// Why a string is not an item id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not an item id (expected `fish:K` or `coin:K`)")]
pub struct ItemIdError(pub String);

impl FromStr for ItemId {
    type Err = ItemIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ItemIdError(s.to_string());
        let (kind, owner) = s.split_once(':').ok_or_else(bad)?;
        let owner: PlayerIdx = owner.parse().map_err(|_| bad())?;
        match kind {
            "fish" => Ok(ItemId::fish(owner)),
            "coin" => Ok(ItemId::coin(owner)),
            _ => Err(bad()),
        }
    }
}

impl Serialize for ItemId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for ItemId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A pose in the table frame (mm, radians). Fish carry `theta`; coins do not.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Pose {
    pub x: f64,
    pub y: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theta: Option<f64>,
}

impl Pose {
    pub fn fish(x: f64, y: f64, theta: f64) -> Self {
        Pose {
            x,
            y,
            theta: Some(theta),
        }
    }
    pub fn coin(x: f64, y: f64) -> Self {
        Pose { x, y, theta: None }
    }
    pub fn point(&self) -> nalgebra::Point2<f64> {
        nalgebra::Point2::new(self.x, self.y)
    }
    /// The angle, 0 for items that have none (coins).
    pub fn angle(&self) -> f64 {
        self.theta.unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_ids_round_trip_and_order_by_owner_then_fish_first() {
        let ids: Vec<ItemId> = ["coin:1", "fish:1", "coin:0", "fish:0"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        let mut sorted = ids.clone();
        sorted.sort();
        let names: Vec<String> = sorted.iter().map(|i| i.to_string()).collect();
        assert_eq!(names, ["fish:0", "coin:0", "fish:1", "coin:1"]);
        assert!("tag:1".parse::<ItemId>().is_err());
        assert!("fish:x".parse::<ItemId>().is_err());
        assert!("fish".parse::<ItemId>().is_err());
    }
}
