//! Cancellation of one operation by its caller: the binding fires an [`Abort`]
//! from a JS `AbortSignal`'s listener, and the operation (a collection, a
//! running command) awaits its [`AbortToken`] on any thread.

use tokio::sync::watch;

/// The caller's side: fires the token, once and for good.
pub struct Abort(watch::Sender<bool>);

/// The operation's side: cheap to clone, awaitable from any thread.
#[derive(Clone)]
pub struct AbortToken(watch::Receiver<bool>);

/// A fresh, unfired pair.
pub fn pair() -> (Abort, AbortToken) {
    let (sender, receiver) = watch::channel(false);
    (Abort(sender), AbortToken(receiver))
}

impl Abort {
    /// Fires the token; firing again changes nothing.
    pub fn abort(&self) {
        self.0.send_replace(true);
    }
}

impl AbortToken {
    /// A token that never fires (no signal was given).
    pub fn never() -> Self {
        pair().1
    }

    /// A token that has already fired (the signal was aborted when read).
    pub fn fired() -> Self {
        let (abort, token) = pair();
        abort.abort();
        token
    }

    /// Resolves once the token has fired; never, when it no longer can.
    pub async fn aborted(mut self) {
        if self.0.wait_for(|aborted| *aborted).await.is_err() {
            // The `Abort` is gone without firing: the token can no longer fire.
            std::future::pending::<()>().await;
        }
    }

    /// Whether the token has fired.
    pub fn is_aborted(&self) -> bool {
        *self.0.borrow()
    }

    /// Whether the token has fired or still can: `false` when there was no
    /// signal, so nothing needs to watch it.
    pub fn can_fire(&self) -> bool {
        self.is_aborted() || self.0.has_changed().is_ok()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_token_without_a_signal_never_fires() {
        let token = AbortToken::never();
        assert!(!token.is_aborted());
        assert!(!token.can_fire());
    }

    #[test]
    fn an_already_aborted_signal_gives_a_fired_token() {
        let token = AbortToken::fired();
        assert!(token.is_aborted());
        assert!(token.can_fire());
    }

    #[tokio::test]
    async fn aborting_wakes_every_clone() {
        let (abort, token) = pair();
        assert!(token.can_fire() && !token.is_aborted());
        let waiting = tokio::spawn(token.clone().aborted());
        abort.abort();
        tokio::time::timeout(Duration::from_secs(5), waiting).await.unwrap().unwrap();
        assert!(token.is_aborted());
    }

    #[tokio::test]
    async fn a_dropped_abort_leaves_the_token_pending_for_good() {
        let (abort, token) = pair();
        drop(abort);
        assert!(!token.can_fire());
        assert!(tokio::time::timeout(Duration::from_millis(50), token.aborted()).await.is_err());
    }
}
