{-# LANGUAGE BangPatterns, OverloadedStrings #-}
-- | The Chut chat-server benchmark of seed 003 (spec/workloads/chat.json):
-- G groups of CPG users message each other for T seconds.
--
-- Every process of the seed is a Haskell thread (forkIO). Every inbox is an
-- STM TBQueue bounded at 16 messages, and a thread that waits on more than
-- one thing (a user: its client's requests, its group, passing a message on;
-- a client: its user, its deliveries, its timer) chooses with STM's orElse,
-- GHC's select. A bounded inbox holds a flooding client back; since users
-- and clients always take deliveries while they wait to pass a message on,
-- the bounded queues never deadlock. A message goes client -> its user ->
-- the group -> the peer user (which keeps it in its history) -> the peer's
-- client, which counts it and records its latency.
module Chat (measureChat, ChatParams (..), ChatOutcome (..), runChat, sentence) where

import Control.Concurrent (forkIO, threadDelay)
import Control.Concurrent.Chan (Chan, newChan, readChan, writeChan)
import Control.Concurrent.QSem (QSem, newQSem, signalQSem, waitQSem)
import Control.Concurrent.MVar (MVar, newEmptyMVar, putMVar, readMVar)
import Control.Concurrent.STM
import Control.Monad (forM, replicateM, unless, void, when, (>=>))
import Data.Aeson (toJSON)
import qualified Data.ByteString as B
import Data.Bits (shiftR)
import Data.Int (Int64)
import qualified Data.IntMap.Strict as IM
import Data.IORef
import qualified Data.Text as T
import qualified Data.Text.Encoding as TE
import qualified Data.Vector as V
import qualified Data.Vector.Mutable as MV
import GHC.Stats (gcdetails_mem_in_use_bytes, gc, getRTSStats, getRTSStatsEnabled)
import Msgbench.Histogram (bucket)
import Msgbench.Measure (nowNs, peakRssBytes)
import Msgbench.Options
import Msgbench.Protocol
import System.Mem (performGC)
import System.Random (StdGen, initStdGen, uniformR)

-- | The seed's sentence (with an em dash, U+2014), UTF-8.
sentence :: B.ByteString
sentence = TE.encodeUtf8 (T.pack "I've been mad for fucking years\x2014\&absolutely years")

data ChatParams = ChatParams
  { groups, perGroup :: !Int
  , durationNs, thinkNs, delayNs :: !Int64
  , binary :: !Bool
  , history :: !Int
  , drainTimeoutNs :: !Int64
  , mailboxes :: !T.Text -- ^ option mailbox: bounded, fair or unbounded
  }

-- | What travels: immutable, passed on by reference; the peer user's history
-- keeps the same value.
data Msg = Msg {mFrom, mTo, mGroup :: !Int, mSentAt :: !Int64, _mBody :: !B.ByteString}

data ChatOutcome = ChatOutcome
  { sent, received, receivedInWindow, crossGroup, selfDeliveries, users, processes :: !Int64
  , setupNs, sendWindowNs, drainNs, runtimeMemory, latencyMax :: !Int64
  , latency :: [(Int, Int64)]
  }

-- | A client's counts, published when it stops.
data Tally = Tally
  { tReceived, tInWindow, tCross, tSelf, tLast, tMax :: !Int64
  , tHist :: !(IM.IntMap Int64)
  }

inboxCapacity :: Integer
inboxCapacity = 16

-- | Waits for one of several STM actions, the first ready in the order given.
select :: [STM a] -> IO a
select = atomically . foldr1 orElse

-- | orElse is left-biased, unlike Go's random select: a thread that always
-- put deliveries first would starve its own sends while deliveries keep
-- coming (and the other way round), so users and clients take turns: the
-- deliveries' side first on one wait, the sends' side first on the next.
fairly :: Bool -> [a] -> [a] -> [a]
fairly deliveriesFirst deliveries sends
  | deliveriesFirst = deliveries ++ sends
  | otherwise = sends ++ deliveries

-- | A thread's alternating turn.
newTurns :: IO (IO Bool)
newTurns = do
  ref <- newIORef False
  pure (atomicModifyIORef' ref (\b -> (not b, b)))

-- | Started threads count themselves here; the coordinator waits for all.
data Session = Session
  { ready :: TVar Int
  , usersStarted :: TVar Int
  , release :: IORef Int64 -- written before the release MVar is filled
  , released :: MVar ()
  , quit :: TVar Bool
  }


started :: Session -> IO ()
started s = atomically (modifyTVar' (ready s) (+ 1))

-- | A group's inbox: one queue in arrival order, where each user may have at
-- most 'groupCredit' messages at a time (its own credit TVar, given back when
-- the group takes the message). Users never race one another for a shared
-- place, so none can lose that race for ever.
type GroupInbox = TQueue (Msg, TVar Int)

groupCredit :: Int
groupCredit = 4

groupLoop :: Session -> GroupInbox -> V.Vector (TBQueue Msg) -> IO ()
groupLoop s inbox members = do
  started s
  let loop = do
        m <- atomically $ do
          (m, credit) <- readTQueue inbox
          modifyTVar' credit (+ 1)
          pure m
        atomically (writeTBQueue (members V.! mTo m) m)
        loop
  loop

-- | A user passes its client's messages to the group and the group's
-- deliveries (kept in the history, a ring of its last `history` messages in
-- a mutable vector) to its client, one of each at a time.
userLoop :: Session -> Int -> TBQueue Msg -> TBQueue Msg -> GroupInbox -> TBQueue Msg -> IO ()
userLoop s keep requests inbox toGroup toClient = do
  started s
  credit <- newTVarIO groupCredit
  let toGroupWrite o = do
        c <- readTVar credit
        check (c > 0)
        writeTVar credit (c - 1)
        writeTQueue toGroup (o, credit)
  atomically (modifyTVar' (usersStarted s) (+ 1))
  hist <- MV.new keep
  nextTurn <- newTurns
  let loop !out !inc !next = do
        turn <- nextTurn
        ev <-
          select $
            fairly
              turn
              (maybe [] (\i -> [writeTBQueue toClient i >> pure PassedIn]) inc ++ [TookIn <$> readTBQueue inbox | null inc])
              (maybe [] (\o -> [toGroupWrite o >> pure PassedOut]) out ++ [TookOut <$> readTBQueue requests | null out])
        case ev of
          PassedOut -> loop Nothing inc next
          PassedIn -> loop out Nothing next
          TookOut o -> loop (Just o) inc next
          TookIn i
            | keep == 0 -> loop out (Just i) next
            | otherwise -> do
                MV.write hist next i
                loop out (Just i) (if next + 1 == keep then 0 else next + 1)
  loop Nothing Nothing (0 :: Int)

-- | mailbox mode: one unbounded mailbox per user, as an Erlang process has.
data UserMail = ToSend !Msg | Deliver !Msg

groupMailLoop :: Session -> TQueue Msg -> V.Vector (TQueue UserMail) -> IO ()
groupMailLoop s inbox members = do
  started s
  let loop = do
        m <- atomically (readTQueue inbox)
        atomically (writeTQueue (members V.! mTo m) (Deliver m))
        loop
  loop

userMailLoop :: Session -> Int -> TQueue UserMail -> TQueue Msg -> TQueue Msg -> IO ()
userMailLoop s keep mailbox toGroup toClient = do
  started s
  atomically (modifyTVar' (usersStarted s) (+ 1))
  hist <- MV.new keep
  let loop !next = do
        mail <- atomically (readTQueue mailbox)
        case mail of
          ToSend m -> atomically (writeTQueue toGroup m) >> loop next
          Deliver m
            | keep == 0 -> atomically (writeTQueue toClient m) >> loop next
            | otherwise -> do
                MV.write hist next m
                atomically (writeTQueue toClient m)
                loop (if next + 1 == keep then 0 else next + 1)
  loop (0 :: Int)

-- | mailbox = fair: a group's inbox is a Chan whose room (16) is a QSem, and
-- a user's mailbox a Chan whose room for its client's sends (16) is a QSem:
-- GHC's MVars wake blocked threads first in, first out, so whoever waited
-- longest gets the next place. Deliveries are never held back (the group and
-- the users never wait to deliver), so nothing can wait in a cycle.
groupFairLoop :: Session -> Chan Msg -> QSem -> V.Vector (Chan UserMail) -> IO ()
groupFairLoop s inbox room members = do
  started s
  let loop = do
        m <- readChan inbox
        signalQSem room
        writeChan (members V.! mTo m) (Deliver m)
        loop
  loop

userFairLoop :: Session -> Int -> Chan UserMail -> QSem -> Chan Msg -> QSem -> TQueue Msg -> IO ()
userFairLoop s keep mailbox room toGroup groupRoom toClient = do
  started s
  atomically (modifyTVar' (usersStarted s) (+ 1))
  hist <- MV.new keep
  let loop !next = do
        mail <- readChan mailbox
        case mail of
          ToSend m -> do
            signalQSem room
            waitQSem groupRoom
            writeChan toGroup m
            loop next
          Deliver m
            | keep == 0 -> atomically (writeTQueue toClient m) >> loop next
            | otherwise -> do
                MV.write hist next m
                atomically (writeTQueue toClient m)
                loop (if next + 1 == keep then 0 else next + 1)
  loop (0 :: Int)

data UserEvent = PassedOut | PassedIn | TookOut Msg | TookIn Msg

-- | How a client hands a message to its user: inside its select (bounded STM
-- queues), or by a blocking, FIFO-fair wait for room (mailbox = fair).
data Sender = InSelect (Msg -> STM ()) | Blocking (Msg -> IO ())

data ClientEvent = Sent | Got Msg | Tick | Quit

clientLoop ::
  Session -> ChatParams -> Int -> Int -> Sender -> STM Msg -> IORef Int64 ->
  (Int64 -> IO ()) -> (Tally -> IO ()) -> IO ()
clientLoop s p g idx sender fromUser receivedRef stopped publish = do
  started s
  gen0 <- initStdGen
  nextTurn <- newTurns
  readMVar (released s)
  start <- readIORef (release s)
  let deadline = start + durationNs p
      compose gen now =
        let (peer0, gen') = uniformR (0, perGroup p - 2) gen :: (Int, StdGen)
            peer = if peer0 >= idx then peer0 + 1 else peer0
            body = if binary p then sentence <> stamp now else sentence
         in (Msg idx peer g now body, gen')
      receive !t m = do
        now <- nowNs
        let lat = now - mSentAt m
            !r = tReceived t + 1
        writeIORef receivedRef r
        pure
          t { tReceived = r
            , tInWindow = if now < deadline then tInWindow t + 1 else tInWindow t
            , tCross = if mGroup m /= g then tCross t + 1 else tCross t
            , tSelf = if mGroup m == g && mFrom m == idx then tSelf t + 1 else tSelf t
            , tLast = now
            , tMax = max (tMax t) lat
            , tHist = IM.insertWith (+) (bucket lat) 1 (tHist t) }
      takeWaiting !t = do
        d <- atomically ((Just <$> fromUser) `orElse` pure Nothing)
        maybe (pure t) (receive t >=> takeWaiting) d
      -- wait for a delivery, the send to go through, or extra (a timer)
      await turn pending extra = case (sender, pending) of
        (Blocking send, Just m) -> send m >> pure Sent
        (InSelect send, _) -> select (fairly turn [Got <$> fromUser] (maybe [] (\m -> [send m >> pure Sent]) pending) ++ extra)
        (Blocking _, Nothing) -> select ((Got <$> fromUser) : extra)
      timer ns = registerDelay (fromIntegral (max 0 ns `div` 1000))
      fired tv = readTVar tv >>= check
      -- stress: send, listen (or take what is there), until T
      stress !gen !count !t pending listening = case (pending, listening) of
        (Nothing, Nothing) -> do
          now <- nowNs
          if now >= deadline
            then pure (count, t)
            else let (m, gen') = compose gen now in stress gen' count t (Just m) Nothing
        _ -> do
          turn <- nextTurn
          ev <- await turn pending (maybe [] (\tv -> [fired tv >> pure Tick]) listening)
          case ev of
            Sent
              | delayNs p == 0 -> takeWaiting t >>= \t' -> stress gen (count + 1) t' Nothing Nothing
              | otherwise -> timer (delayNs p) >>= \tv -> stress gen (count + 1) t Nothing (Just tv)
            Got m -> receive t m >>= \t' -> stress gen count t' pending listening
            Tick -> stress gen count t pending Nothing
            Quit -> pure (count, t)
      -- realistic: send every think time from a random phase, listening between
      realistic !gen !count !t !due pending tv = do
        turn <- nextTurn
        ev <- await turn pending [fired tv >> pure Tick | null pending]
        case ev of
          Tick -> do
            now <- nowNs
            let (m, gen') = compose gen now
            realistic gen' count t due (Just m) tv
          Sent -> do
            let due' = due + thinkNs p
            if due' >= deadline
              then pure (count + 1, t)
              else do
                now <- nowNs
                tv' <- timer (due' - now)
                realistic gen (count + 1) t due' Nothing tv'
          Got m -> receive t m >>= \t' -> realistic gen count t' due pending tv
          Quit -> pure (count, t)
      drain !t = do
        ev <- select [Got <$> fromUser, readTVar (quit s) >>= check >> pure Quit]
        case ev of
          Got m -> receive t m >>= drain
          _ -> pure t
      tally0 = Tally 0 0 0 0 0 0 IM.empty
  (count, t) <-
    if thinkNs p == 0
      then stress gen0 0 tally0 Nothing Nothing
      else do
        let (phase, gen1) = uniformR (0, thinkNs p - 1) gen0
            due = start + phase
        if due >= deadline
          then pure (0, tally0)
          else do
            now <- nowNs
            tv <- timer (due - now)
            realistic gen1 0 tally0 due Nothing tv
  stopped count
  drain t >>= publish

-- | The seed's term_to_binary({Text, os:timestamp()}) stands in as the
-- sentence and the 8-byte send time, a fresh buffer per message.
stamp :: Int64 -> B.ByteString
stamp now = B.pack [fromIntegral (now `shiftR` sh) | sh <- [56, 48 .. 0]]

runChat :: ChatParams -> IO ChatOutcome
runChat p = do
  let n = groups p * perGroup p
      procs = groups p + 2 * n
  s <- Session <$> newTVarIO 0 <*> newTVarIO 0 <*> newIORef 0 <*> newEmptyMVar <*> newTVarIO False
  stoppedChan <- newChan
  results <- newChan
  begin <- nowNs
  receivedRefs <- fmap concat . forM [0 .. groups p - 1] $ \g -> if mailboxes p == "fair" then do
    gin <- newChan
    groupRoom <- newQSem (fromInteger inboxCapacity)
    members <- forM [0 .. perGroup p - 1] $ \_ -> (,,) <$> newChan <*> newQSem (fromInteger inboxCapacity) <*> newTQueueIO
    void (forkIO (groupFairLoop s gin groupRoom (V.fromList [mb | (mb, _, _) <- members])))
    forM (zip [0 ..] members) $ \(i, (mailbox, room, cinbox)) -> do
      void (forkIO (userFairLoop s (history p) mailbox room gin groupRoom cinbox))
      ref <- newIORef 0
      let send m = waitQSem room >> writeChan mailbox (ToSend m)
      void (forkIO (clientLoop s p g i (Blocking send) (readTQueue cinbox) ref (writeChan stoppedChan) (writeChan results)))
      pure ref
  else if mailboxes p == "unbounded" then do
    gin <- newTQueueIO
    members <- forM [0 .. perGroup p - 1] $ \_ -> (,) <$> newTQueueIO <*> newTQueueIO
    void (forkIO (groupMailLoop s gin (V.fromList (map fst members))))
    forM (zip [0 ..] members) $ \(i, (mailbox, cinbox)) -> do
      void (forkIO (userMailLoop s (history p) mailbox gin cinbox))
      ref <- newIORef 0
      void (forkIO (clientLoop s p g i (InSelect (writeTQueue mailbox . ToSend)) (readTQueue cinbox) ref (writeChan stoppedChan) (writeChan results)))
      pure ref
  else do
    gin <- newTQueueIO
    members <- forM [0 .. perGroup p - 1] $ \_ -> do
      requests <- newTBQueueIO (fromInteger inboxCapacity)
      uinbox <- newTBQueueIO (fromInteger inboxCapacity)
      cinbox <- newTBQueueIO (fromInteger inboxCapacity)
      pure (requests, uinbox, cinbox)
    void (forkIO (groupLoop s gin (V.fromList [u | (_, u, _) <- members])))
    forM (zip [0 ..] members) $ \(i, (requests, uinbox, cinbox)) -> do
      void (forkIO (userLoop s (history p) requests uinbox gin cinbox))
      ref <- newIORef 0
      void (forkIO (clientLoop s p g i (InSelect (writeTBQueue requests)) (readTBQueue cinbox) ref (writeChan stoppedChan) (writeChan results)))
      pure ref
  atomically (readTVar (ready s) >>= \k -> check (k == procs))
  t1 <- nowNs
  performGC
  start <- nowNs
  writeIORef (release s) start
  putMVar (released s) ()
  let deadline = start + durationNs p
  now0 <- nowNs
  when (deadline > now0) $ threadDelay (fromIntegral ((deadline - now0) `div` 1000))
  statsOn <- getRTSStatsEnabled
  mem <- if statsOn then fromIntegral . gcdetails_mem_in_use_bytes . gc <$> getRTSStats else pure 0
  totalSent <- sum <$> replicateM n (readChan stoppedChan)
  stoppedAt <- nowNs
  let drainEnd = stoppedAt + drainTimeoutNs p
      receivedNow = sum <$> mapM readIORef receivedRefs
      waitDrain = do
        r <- receivedNow
        now <- nowNs
        unless (r >= totalSent || now >= drainEnd) (threadDelay 1000 >> waitDrain)
  waitDrain
  atomically (writeTVar (quit s) True)
  tallies <- replicateM n (readChan results)
  nUsers <- readTVarIO (usersStarted s)
  nProcs <- readTVarIO (ready s)
  let total f = sum (map f tallies)
      lastDelivery = maximum (0 : map tLast tallies)
  pure
    ChatOutcome
      { sent = totalSent, received = total tReceived, receivedInWindow = total tInWindow
      , crossGroup = total tCross, selfDeliveries = total tSelf
      , users = fromIntegral nUsers, processes = fromIntegral nProcs
      , setupNs = t1 - begin, sendWindowNs = stoppedAt - start
      , drainNs = max 0 (lastDelivery - deadline), runtimeMemory = mem
      , latencyMax = maximum (0 : map tMax tallies)
      , latency = IM.toAscList (IM.unionsWith (+) (map tHist tallies)) }

measureChat :: Request -> IO Result
measureChat req = do
  optionsKnown req ["mailbox"]
  mailbox <- optionText req "mailbox" "bounded"
  unless (mailbox `elem` ["bounded", "fair", "unbounded"]) $
    failWith Internal ("option mailbox = " ++ show mailbox ++ " is not bounded, fair or unbounded")
  g <- param req "groups"
  cpg <- param req "clients_per_group"
  dur <- param req "duration_s"
  think <- param req "think_ms"
  delay <- param req "listener_delay_ms"
  message <- param req "message"
  hist <- param req "history"
  drainS <- param req "drain_timeout_s"
  let seconds x = round (x * 1e9 :: Double)
      p = ChatParams g cpg (seconds dur) (think * 1000000) (delay * 1000000) (message == ("binary" :: T.Text)) hist (seconds drainS) mailbox
  o <- runChat p
  rss <- peakRssBytes
  pure
    Result
      { measured =
          [ ("setup_ns", toJSON (setupNs o)), ("send_window_ns", toJSON (sendWindowNs o)), ("drain_ns", toJSON (drainNs o))
          , ("received_in_window", toJSON (receivedInWindow o)), ("processes_count", toJSON (processes o))
          , ("peak_rss_bytes", toJSON rss), ("runtime_memory_bytes", toJSON (runtimeMemory o))
          , ("latency_max_ns", toJSON (latencyMax o)) ]
      , verify =
          [ ("sent", sent o), ("received", received o), ("cross_group", crossGroup o)
          , ("self_deliveries", selfDeliveries o), ("users", users o) ]
      , histograms = [("latency_ns", latency o)]
      }
