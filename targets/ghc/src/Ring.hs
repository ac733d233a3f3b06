{-# LANGUAGE BangPatterns, OverloadedStrings #-}
-- | The process ring of seed 004 (spec/workloads/ring.json): n Haskell
-- threads (forkIO), one MVar inbox per link, as in the Benchmarks Game's
-- thread-ring; a token passed m laps.
module Ring (Outcome (..), runRing, measureRing) where

import Control.Concurrent (forkIO)
import Control.Concurrent.MVar (MVar, newEmptyMVar, putMVar, takeMVar)
import Control.Monad (void)
import Data.Aeson (toJSON)
import Data.Int (Int64)
import Data.Text (Text)
import Msgbench.Measure (cpuNs, nowNs, peakRssBytes)
import Msgbench.Options (optionsKnown)
import Msgbench.Protocol

-- | The three messages of the ring share one inbox per link, as connect and
-- the token share the mailbox in the seed.
data Msg
  = -- | the seed's {connect, Link}: the sender's inbox and the links from it to the end
    Connect !(MVar Msg) !Int64
  | -- | the seed's {Laps, Payload}
    Token !Int64 !Text
  | -- | after the timed laps: each link adds its hops, forwards it and ends
    Collect !Int64

data Outcome = Outcome
  { createWall, createCpu, passWall, passCpu :: !Int64
  , hops, laps, links :: !Int64
  }

-- | Builds the ring, passes the token, gathers the counts. The calling
-- thread is the root (the seed's lap counter).
runRing :: Int64 -> Int64 -> Text -> IO Outcome
runRing n m payload = do
  inbox <- newEmptyMVar
  t0 <- nowNs
  c0 <- cpuNs
  void (forkIO (link (n - 1) inbox inbox))
  joined <- takeMVar inbox
  (next, joinedLinks) <- case joined of
    Connect nx k -> pure (nx, k)
    _ -> failWith Internal "the root got something other than connect while building the ring"
  t1 <- nowNs
  c1 <- cpuNs
  putMVar next (Token m payload)
  let lapCounter !sends !seen = do
        msg <- takeMVar inbox
        case msg of
          Token left p
            | left == 1 -> pure (sends, seen + 1)
            | otherwise -> putMVar next (Token (left - 1) p) >> lapCounter (sends + 1) (seen + 1)
          _ -> failWith Internal "the root got something other than the token while passing it"
  (sends, seenLaps) <- lapCounter (1 :: Int64) (0 :: Int64)
  t2 <- nowNs
  c2 <- cpuNs
  putMVar next (Collect 0)
  gathered <- takeMVar inbox
  linkHops <- case gathered of
    Collect h -> pure h
    _ -> failWith Internal "the root got something other than collect after the laps"
  pure
    Outcome
      { createWall = t1 - t0, createCpu = c1 - c0, passWall = t2 - t1, passCpu = c2 - c1
      , hops = sends + linkHops, laps = seenLaps, links = joinedLinks + 1 }

-- | The seed's newLink: remaining counts this link and those it still spawns.
link :: Int64 -> MVar Msg -> MVar Msg -> IO ()
link remaining prev root = do
  inbox <- newEmptyMVar
  if remaining == 1
    then putMVar prev (Connect inbox 1) >> forward inbox root 0
    else do
      void (forkIO (link (remaining - 1) inbox root))
      joined <- takeMVar inbox
      case joined of
        Connect next k -> putMVar prev (Connect inbox (k + 1)) >> forward inbox next 0
        _ -> error "a link got something other than connect while the ring was built"

-- | The seed's passMsgOn: forward whatever arrives, counting, until collect.
forward :: MVar Msg -> MVar Msg -> Int64 -> IO ()
forward inbox next !count = do
  msg <- takeMVar inbox
  case msg of
    Collect h -> putMVar next (Collect (h + count))
    _ -> putMVar next msg >> forward inbox next (count + 1)

measureRing :: Request -> IO Result
measureRing req = do
  optionsKnown req []
  n <- param req "n"
  m <- param req "m"
  payload <- param req "payload"
  o <- runRing n m payload
  rss <- peakRssBytes
  pure
    emptyResult
      { measured =
          [ ("create_wall_ns", toJSON (createWall o)), ("create_cpu_ns", toJSON (createCpu o))
          , ("pass_wall_ns", toJSON (passWall o)), ("pass_cpu_ns", toJSON (passCpu o))
          , ("peak_rss_bytes", toJSON rss) ]
      , verify = [("hops", hops o), ("laps", laps o), ("links", links o)]
      }
