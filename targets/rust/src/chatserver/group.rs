//! A group: one task holding its members' inboxes. It routes each message from a
//! member to another member picked uniformly at random (Chut's group process).

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use std::collections::HashMap;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;

/// What a group's inbox carries.
pub enum GroupMsg {
    /// A user joins; the group answers on `ack` once it knows the user (or why not).
    Join {
        user: u64,
        inbox: UnboundedSender<Message>,
        ack: oneshot::Sender<Result<(), String>>,
    },
    /// A chat message from member `from`, for a random other member.
    Route { from: u64, message: Message },
    /// The member's connection closed.
    Leave { user: u64 },
}

/// The members of one group, each with its inbox, and the random peer choice.
pub struct Members<T> {
    members: Vec<(u64, T)>,
    /// user -> its position in `members` (kept right across swap_remove).
    index: HashMap<u64, usize>,
    rng: SmallRng,
}

impl<T> Members<T> {
    pub fn new(seed: u64) -> Self {
        Self {
            members: Vec::new(),
            index: HashMap::new(),
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.members.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn join(&mut self, user: u64, inbox: T) -> Result<(), String> {
        if self.index.contains_key(&user) {
            return Err(format!("user {user} has already joined this group"));
        }
        self.index.insert(user, self.members.len());
        self.members.push((user, inbox));
        Ok(())
    }

    pub fn leave(&mut self, user: u64) {
        let Some(position) = self.index.remove(&user) else {
            return;
        };
        self.members.swap_remove(position);
        if let Some((moved, _)) = self.members.get(position) {
            self.index.insert(*moved, position);
        }
    }

    /// A member other than `from`, uniformly; None when there is none.
    pub fn pick_peer(&mut self, from: u64) -> Option<&T> {
        let pick = match self.index.get(&from) {
            Some(&own) => {
                if self.members.len() < 2 {
                    return None;
                }
                // Draw among the n - 1 others: skip over the sender's own slot.
                let pick = self.rng.random_range(0..self.members.len() - 1);
                if pick >= own { pick + 1 } else { pick }
            }
            // A sender that already left: any member is "another" one.
            None if self.members.is_empty() => return None,
            None => self.rng.random_range(0..self.members.len()),
        };
        Some(&self.members[pick].1)
    }
}

/// The group's task: until every sender of its inbox is gone (the server stops).
pub async fn run(mut inbox: UnboundedReceiver<GroupMsg>, seed: u64) {
    let mut members = Members::new(seed);
    while let Some(message) = inbox.recv().await {
        match message {
            GroupMsg::Join { user, inbox, ack } => {
                let outcome = members.join(user, inbox);
                // A user whose connection closed meanwhile no longer listens.
                let _ = ack.send(outcome);
            }
            GroupMsg::Route { from, message } => {
                if let Some(peer) = members.pick_peer(from) {
                    // A peer that is closing drops it; its Leave is on its way.
                    let _ = peer.send(message);
                }
            }
            GroupMsg::Leave { user } => members.leave(user),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_picks_the_sender_and_reaches_every_other_member() {
        let mut members = Members::new(7);
        for user in 10..15 {
            members.join(user, user).unwrap();
        }
        let mut seen = [0u32; 5];
        for _ in 0..2000 {
            let peer = *members.pick_peer(12).unwrap();
            assert_ne!(peer, 12);
            seen[(peer - 10) as usize] += 1;
        }
        assert_eq!(seen[2], 0);
        // Uniform over 4 others: ~500 each; 300 is far outside any plausible draw.
        assert!(
            seen.iter().enumerate().all(|(i, &n)| i == 2 || n > 300),
            "{seen:?}"
        );
    }

    #[test]
    fn leaving_keeps_the_index_right() {
        let mut members = Members::new(1);
        for user in [1, 2, 3] {
            members.join(user, user).unwrap();
        }
        members.leave(1); // 3 moves into 1's slot
        assert_eq!(members.len(), 2);
        for _ in 0..100 {
            assert_eq!(*members.pick_peer(3).unwrap(), 2);
            assert_eq!(*members.pick_peer(2).unwrap(), 3);
        }
        members.leave(2);
        assert_eq!(members.pick_peer(3), None);
        members.leave(3);
        assert!(members.is_empty());
        assert_eq!(members.pick_peer(3), None);
    }

    #[test]
    fn a_user_joins_once() {
        let mut members = Members::new(1);
        members.join(5, ()).unwrap();
        let err = members.join(5, ()).unwrap_err();
        assert!(err.contains("user 5"), "{err}");
    }
}
