-- | An open loop's schedule (socket echo's rate): event i (from 0) is due at
-- start + i / perSecond. A sender waits for each event's due time and, when it
-- is late, goes at once (it never skips), so a receiver that times each event
-- from its due time charges the system for any wait it caused (coordinated
-- omission corrected).
module Msgbench.Pacer (Pacer, pacer, due, waitUntil, spinNs) where

import Control.Concurrent (yield)
import Control.Monad (when)
import Data.Int (Int64)
import Msgbench.Measure (nowNs)
import System.Posix.Unistd (nanosleep)

data Pacer = Pacer {pStart :: !Int64, pIntervalNs :: !Double}

-- | A schedule from start (nowNs) at perSecond (> 0) events a second.
pacer :: Int64 -> Double -> Pacer
pacer start perSecond
  | perSecond > 0 = Pacer start (1e9 / perSecond)
  | otherwise = error ("perSecond = " ++ show perSecond ++ ": a rate must be > 0")

-- | Event i's intended time, nowNs ns.
due :: Pacer -> Int64 -> Int64
due p i = pStart p + round (fromIntegral i * pIntervalNs p)

-- | How early 'waitUntil' stops sleeping and spins the rest: nanosleep wakes
-- about 50-60 us late (a normal thread's timer slack, then the wake-up).
spinNs :: Int64
spinNs = 60000

-- | The longest one sleep lasts, so that an asynchronous exception (killThread),
-- which waits for a foreign call to return, arrives soon.
sliceNs :: Int64
sliceNs = 50000000

-- | Blocks the calling Haskell thread until nowNs >= t. The sleep is a safe
-- foreign call to nanosleep (the unix package), which frees the capability for
-- the other Haskell threads: threadDelay's timer manager waits in epoll_wait,
-- whose timeout is in whole milliseconds, far coarser than the gaps between
-- messages. The last spinNs are spun with yield, which lets this
-- capability's other threads (this socket's reader) run.
waitUntil :: Int64 -> IO ()
waitUntil t = do
  rest <- (t -) <$> nowNs
  when (rest > 0) $ do
    if rest > spinNs
      then nanosleep (toInteger (min sliceNs (rest - spinNs)))
      else yield
    waitUntil t
