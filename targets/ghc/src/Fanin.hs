{-# LANGUAGE BangPatterns, OverloadedStrings, TupleSections #-}
-- | The parallel send/receive benchmark of seed 000 (spec/workloads/fanin.json):
-- N sender threads send to one receiver thread for duration_ms.
--
-- Messages go through one Chan bounded at 1024 signals by a QSem (the
-- unbounded Chan let four senders bury the receiver under a backlog of
-- hundreds of MB; see README.md), or another queue chosen by option queue.
-- Exit signals are unsupported by default (see 'unsupportedExit'); with the
-- option exit_signals_as_exceptions they are GHC's asynchronous exceptions: the sender throwTo's an
-- 'ExitSignal' carrying the payload to the receiver, which traps it: it runs
-- masked and takes pending exceptions only where it would check its mailbox
-- (before each receive, and while blocked in readChan), so no message is lost
-- half-received, and it goes on receiving, as a process with trap_exit does.
module Fanin (measureFanin, Share (..), Counts (..), runFanin, FaninOutcome (..)) where

import Control.Concurrent (forkIO, threadDelay, throwTo)
import Control.Concurrent.Chan (newChan, readChan, writeChan)
import Control.Concurrent.STM (atomically, newTBQueueIO, newTQueueIO, readTBQueue, readTQueue, writeTBQueue, writeTQueue)
import Control.Concurrent.QSem (newQSem, signalQSem, waitQSem)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, readMVar, takeMVar)
import Control.Exception (Exception, SomeException, allowInterrupt, evaluate, mask_, try)
import Control.Monad (forM_, replicateM, unless, when)
import Data.Aeson (FromJSON (..), toJSON, withObject, (.:))
import Data.IORef (newIORef, readIORef, writeIORef)
import Data.Int (Int64)
import Data.Text (Text)
import qualified Data.Vector.Unboxed as VU
import Msgbench.Measure (cpuNs, nowNs, peakRssBytes, rssBytes)
import Msgbench.Options
import Msgbench.Protocol
import System.Mem (performGC)
import System.Random (StdGen, mkStdGen, uniformR)

-- | One row of the mix.
data Share = Share {sharePercent :: Double, shareKind :: Text, shareSize :: Int}

instance FromJSON Share where
  parseJSON = withObject "share" $ \o -> Share <$> o .: "percent" <*> o .: "kind" <*> o .: "size"

-- | An exit signal: its reason is the payload, a list of machine words.
newtype ExitSignal = ExitSignal (VU.Vector Int)

instance Show ExitSignal where
  show (ExitSignal w) = "ExitSignal of " ++ show (VU.length w) ++ " words"

instance Exception ExitSignal

-- | What travels through the receiver's channel.
data Signal = Message !(VU.Vector Int) | End

data Counts = Counts {messages :: !Int64, exits :: !Int64}

addCounts :: Counts -> Counts -> Counts
addCounts (Counts a b) (Counts c d) = Counts (a + c) (b + d)

data FaninOutcome = FaninOutcome
  { sent, received :: Counts
  , receiverAlive :: Bool
  , sendNs, receiveNs, drainNs, cpuSpent :: Int64
  , overLimit :: Bool
  }

-- | A prepared row: cumulative probability, exit signal or not, the payload 1..size.
data Row = Row !Double !Bool !(VU.Vector Int)

-- | The OTP suite's get_op: the first row whose cumulative probability
-- exceeds the draw, the last row whatever the draw.
pick :: [Row] -> Double -> Row
pick [r] _ = r
pick (r@(Row below _ _) : rest) d = if d < below then r else pick rest d
pick [] _ = error "an empty mix"

-- | The receiver's mailbox (option queue): bchan (the default: a Chan whose
-- room is bounded at 1024 signals by a QSem, senders wait while it is full),
-- chan (the plain unbounded Chan), tqueue (STM, unbounded) or tbqueue (STM,
-- bounded at 1024). README.md says what each measured.
data Mailbox = Mailbox {put :: Signal -> IO (), get :: IO Signal}

-- | The bounded queues' room, in signals.
queueBound :: Int
queueBound = 1024

newMailbox :: Text -> IO Mailbox
newMailbox "tqueue" = do
  q <- newTQueueIO
  pure (Mailbox (atomically . writeTQueue q) (atomically (readTQueue q)))
newMailbox "tbqueue" = do
  q <- newTBQueueIO (fromIntegral queueBound)
  pure (Mailbox (atomically . writeTBQueue q) (atomically (readTBQueue q)))
newMailbox "bchan" = do
  c <- newChan
  room <- newQSem queueBound
  pure (Mailbox (\x -> waitQSem room >> writeChan c x) (readChan c >>= \x -> signalQSem room >> pure x))
newMailbox "chan" = do
  c <- newChan
  pure (Mailbox (writeChan c) (readChan c))
newMailbox other =
  failWith Internal ("option queue = " ++ show other ++ " is not one of bchan, chan, tqueue, tbqueue")

runFanin :: Int -> Int64 -> [Share] -> Bool -> Text -> Int64 -> IO FaninOutcome
runFanin senders durationMs mix share queue limitBytes = do
  let cumulative = scanl1 (+) (map ((/ 100) . sharePercent) mix)
      rows = [Row c (shareKind s == "exit_signal") (VU.enumFromN 1 (shareSize s)) | (c, s) <- zip cumulative mix]
  chan <- newMailbox queue
  receipt <- newEmptyMVar
  receiverReady <- newEmptyMVar
  receiverTid <- forkIO . mask_ $ do
    putMVar receiverReady ()
    let loop !got !ended
          | ended == senders = pure got
          | otherwise = do
              r <- try (allowInterrupt >> get chan)
              case r of
                Left (ExitSignal w) -> VU.length w `seq` loop got {exits = exits got + 1} ended
                Right (Message w) -> VU.length w `seq` loop got {messages = messages got + 1} ended
                Right End -> loop got (ended + 1)
    outcome <- try (loop (Counts 0 0) (0 :: Int))
    t <- nowNs
    putMVar receipt (fmap (, t) (outcome :: Either SomeException Counts))
  takeMVar receiverReady
  stop <- newIORef False
  release <- newEmptyMVar
  reports <- newChan
  forM_ [1 .. senders] $ \k -> forkIO $ do
    readMVar release
    let go !g !count = do
          let (d, g') = uniformR (0, 1) g :: (Double, StdGen)
              Row _ isExit payload = pick rows d
          w <- if share then pure payload else evaluate (VU.force payload)
          count' <-
            if isExit
              then throwTo receiverTid (ExitSignal w) >> pure count {exits = exits count + 1}
              else put chan (Message w) >> pure count {messages = messages count + 1}
          stopped <- readIORef stop
          if stopped then pure count' else go g' count'
    seed <- nowNs
    counted <- go (mkStdGen (fromIntegral seed * 7919 + k)) (Counts 0 0)
    writeChan reports counted
    put chan End
  -- Start from a clean heap, as the OTP suite does with garbage_collect().
  performGC
  c0 <- cpuNs
  t0 <- nowNs
  putMVar release ()
  -- Sleep the planned duration, checking the memory limit every 10 ms.
  let deadline = t0 + durationMs * 1000000
      wait = do
        now <- nowNs
        rss <- rssBytes
        if rss > limitBytes
          then pure True
          else
            if now >= deadline
              then pure False
              else threadDelay (fromIntegral (min 10000 ((deadline - now) `div` 1000))) >> wait
  over <- wait
  writeIORef stop True
  sentCounts <- foldr addCounts (Counts 0 0) <$> replicateM senders (readChan reports)
  t1 <- nowNs
  r <- takeMVar receipt
  c1 <- cpuNs
  let (got, lastReceive, alive) = case r of
        Right (c, t) -> (c, max t t1, True)
        Left _ -> (Counts 0 0, t1, False)
  pure
    FaninOutcome
      { sent = sentCounts, received = got, receiverAlive = alive
      , sendNs = t1 - t0, receiveNs = lastReceive - t0, drainNs = lastReceive - t1, cpuSpent = c1 - c0
      , overLimit = over }

unsupportedExit :: String
unsupportedExit =
  "exit signals are an Erlang notion; GHC's nearest, an asynchronous exception (throwTo) that the receiver "
    ++ "catches, is synchronous (the sender waits until it is raised in the receiver) and not ordered with the "
    ++ "receiver's messages, so it is no equivalent by default; variant exit_exceptions measures it "
    ++ "(option exit_signals_as_exceptions)"

measureFanin :: Request -> IO Result
measureFanin req = do
  optionsKnown req ["share_payload", "queue", "exit_signals_as_exceptions"]
  asExceptions <- optionBool req "exit_signals_as_exceptions"
  share <- optionBool req "share_payload"
  queue <- optionText req "queue" "bchan"
  senders <- param req "senders"
  durationMs <- param req "duration_ms"
  mix <- param req "mix"
  limitMb <- param req "memory_limit_mb"
  forM_ mix $ \s ->
    unless (shareKind s `elem` ["message", "exit_signal"]) $
      failWith Internal ("mix kind " ++ show (shareKind s) ++ " is not a kind this worker knows")
  case [i | (i, s) <- zip [0 :: Int ..] mix, shareKind s == "exit_signal"] of
    (i : _) | not asExceptions -> failWith Unsupported (unsupportedExit ++ " (mix[" ++ show i ++ "].kind = \"exit_signal\")")
    _ -> pure ()
  -- A bounded queue bounds the payload in flight: refuse up front a run whose
  -- worst case (a full queue, one signal per sender and one at the receiver,
  -- all of the largest size, doubled for the copying GC) passes the limit.
  let largest = maximum (map shareSize mix)
      inFlight = toInteger (queueBound + senders + 1)
      worst = inFlight * toInteger largest * 8 * 2
  when (queue `elem` ["bchan", "tbqueue"] && worst > toInteger limitMb * 1024 * 1024) $
    failWith Resource $
      "up to " ++ show (worst `div` (1024 * 1024)) ++ " MiB of payload could be in flight (" ++ show inFlight
        ++ " signals of up to " ++ show largest ++ " words, doubled for the garbage collector), more than memory_limit_mb = "
        ++ show limitMb
  o <- runFanin senders durationMs mix share queue (limitMb * 1024 * 1024)
  when (overLimit o) $
    failWith Resource $
      "the receiver's backlog pushed the worker's resident memory past memory_limit_mb = " ++ show limitMb
  rss <- peakRssBytes
  pure
    emptyResult
      { measured =
          [ ("send_ns", toJSON (sendNs o)), ("receive_ns", toJSON (receiveNs o)), ("drain_ns", toJSON (drainNs o))
          , ("cpu_ns", toJSON (cpuSpent o)), ("peak_rss_bytes", toJSON rss) ]
      , verify =
          [ ("sent_message", messages (sent o)), ("received_message", messages (received o))
          , ("sent_exit_signal", exits (sent o)), ("received_exit_signal", exits (received o))
          , ("receiver_alive", if receiverAlive o then 1 else 0) ]
      }
