{-# LANGUAGE BangPatterns, OverloadedStrings, ScopedTypeVariables #-}
-- | Socket echo and flow (spec/workloads/socket.json) with the network
-- package's Network.Socket and Network.Socket.ByteString: the worker is the
-- client; it starts the server half ('serveMain', the same binary with
-- --serve) from MSGBENCH_PEER_COMMAND (spec/README.md, "Peers"). One Haskell
-- thread per connection on each end; blocking (passive) reads through GHC's
-- I/O manager; one send per frame; TCP_NODELAY on. Echo in open loop (rate >
-- 0): a writer thread per socket beside the reader ('runEchoPaced').
module Socket (measureSocket, serveMain, bucketFill, frameCount, Params (..), Client (..), runEchoPaced) where

import Control.Concurrent (forkFinally, forkIO, killThread)
import Control.Concurrent.Chan (Chan, newChan, readChan, writeChan)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, readMVar, takeMVar)
import Control.Exception (AsyncException (..), IOException, SomeException, bracket, displayException, finally, fromException, onException, throwIO, try)
import Control.Monad (forM, forM_, replicateM, unless, void, when)
import Data.Aeson (Value (..), decodeStrict', object, toJSON, (.=))
import qualified Data.Aeson.KeyMap as KM
import Data.Bits (shiftL, shiftR, (.&.), (.|.))
import qualified Data.ByteString as B
import qualified Data.ByteString.Char8 as BC
import qualified Data.IntMap.Strict as IM
import Data.IORef (IORef, modifyIORef', newIORef, readIORef, writeIORef)
import Data.Int (Int64)
import Data.Maybe (fromMaybe)
import Data.Scientific (toBoundedInteger)
import Data.Text (Text)
import qualified Data.Text as T
import qualified Data.Vector as V
import qualified Data.Aeson.Key as Key
import Data.Word (Word8)
import Msgbench.Histogram (bucket)
import Msgbench.Measure (nowNs, peakRssBytes)
import Msgbench.Pacer (due, pacer, waitUntil)
import Network.Socket
import Network.Socket.ByteString (recv, sendAll, sendMany)
import Msgbench.Options (optionsKnown)
import Msgbench.Protocol
import System.Environment (getExecutablePath, lookupEnv)
import System.Exit (ExitCode (..))
import System.IO (Handle, hClose, hFlush, isEOF, stdin)
import System.Process
import System.Timeout (timeout)

data Params = Params
  { pFlow :: Bool
  , pSize :: Int
  , pTotal :: Int64
  , pSockets :: Int
  , pCheck :: Bool
  , pPort :: Int
  , pRemote :: Bool
  , pRate :: Double -- ^ echo's round trips a second, all sockets; 0: closed loop
  }

messagesOf :: Params -> Int64
messagesOf p = max 1 (pTotal p `div` fromIntegral (pSize p))

parseParams :: Request -> IO Params
parseParams req = do
  mode <- param req "mode"
  size <- param req "size"
  total <- param req "total_bytes"
  sockets <- param req "sockets"
  dataKind <- param req "data"
  placement <- param req "placement"
  check <- param req "check_content"
  port <- param req "port"
  -- Sent only when > 0 (the spec's omit_at_default), and only with echo (the
  -- harness checks the spec's requires).
  rate <- paramOr req "rate" 0
  when (dataKind == ("list" :: Text)) $
    failWith Unsupported "data = \"list\" is an Erlang notion (lists of bytes on a socket); ghc sends ByteStrings only: use data = \"binary\""
  pure (Params (mode == ("flow" :: Text)) size total sockets (check == (1 :: Int)) port (placement == ("remote" :: Text)) rate)

headerBytes :: Int
headerBytes = 4

-- | The flow server's one-byte answer once it has read everything.
ackByte :: Word8
ackByte = 0x06

-- | How many different frames are prepared: the fill value cycles through at
-- most 251 values, and the frames take at most 64 MiB.
frameCount :: Int -> Int64 -> Int
frameCount size messages =
  fromIntegral (minimum [messages, 251, max 2 (fromIntegral ((64 * 1024 * 1024) `div` (size + headerBytes)))])

-- | The fill value of message i.
bucketFill :: Int -> Int64 -> Word8
bucketFill n i = fromIntegral (i `mod` fromIntegral n)

header :: Int -> B.ByteString
header n = B.pack [fromIntegral (n `shiftR` s .&. 0xff) | s <- [24, 16, 8, 0]]

readHeader :: B.ByteString -> Int
readHeader = B.foldl' (\acc w -> acc `shiftL` 8 .|. fromIntegral w) 0

-- | A socket with the bytes read past the last frame.
data Reader = Reader Socket (IORef B.ByteString)

newReader :: Socket -> IO Reader
newReader s = Reader s <$> newIORef B.empty

chunkFor :: Int -> Int
chunkFor want = min (1024 * 1024) (max 65536 want)

-- | Exactly n bytes, or Nothing at the end of the stream before any of them.
readExact :: Reader -> Int -> IO (Maybe B.ByteString)
readExact (Reader s ref) n = do
  buf <- readIORef ref
  if B.length buf >= n
    then do
      let (a, b) = B.splitAt n buf
      writeIORef ref b
      pure (Just a)
    else go [buf | not (B.null buf)] (B.length buf)
  where
    go acc !have
      | have >= n = do
          let (a, b) = B.splitAt n (B.concat (reverse acc))
          writeIORef ref b
          pure (Just a)
      | otherwise = do
          chunk <- recv s (chunkFor (n - have))
          if B.null chunk
            then
              if have == 0
                then writeIORef ref B.empty >> pure Nothing
                else ioError (userError ("the stream ended inside a frame (" ++ show have ++ " of " ++ show n ++ " bytes)"))
            else go (chunk : acc) (have + B.length chunk)

-- | Reads and drops n bytes.
skipExact :: Reader -> Int -> IO ()
skipExact (Reader s ref) n0 = do
  buf <- readIORef ref
  if B.length buf >= n0
    then writeIORef ref (B.drop n0 buf)
    else writeIORef ref B.empty >> go (n0 - B.length buf)
  where
    go n
      | n <= 0 = pure ()
      | otherwise = do
          chunk <- recv s (chunkFor n)
          when (B.null chunk) $ ioError (userError "the stream ended inside a frame")
          if B.length chunk > n
            then writeIORef ref (B.drop n chunk)
            else go (n - B.length chunk)

-- The server half ----------------------------------------------------------

-- | target.toml's serve: read the request, listen, serve, say served.
serveMain :: IO ()
serveMain = do
  line <- try (BC.hGetLine stdin)
  case line of
    Left (e :: IOException) -> say (errorLine Internal ("the server read no request on its stdin: " ++ show e))
    Right l -> case readRequest l of
      Left e -> say (errorLine Internal ("the server cannot read its request: " ++ e))
      Right req
        | reqWorkload req /= "socket" ->
            say (errorLine Unsupported ("the server half serves workload socket only, not " ++ T.unpack (reqWorkload req)))
        | otherwise -> do
            finished <- newEmptyMVar
            -- The server exits when its stdin closes (the worker is gone).
            void . forkIO $ do
              let drain = isEOF >>= \eof -> unless eof (void (BC.hGetLine stdin) >> drain)
              void (try drain :: IO (Either IOException ()))
              putMVar finished ()
            void . forkIO $ do
              r <- try (parseParams req >>= serve)
              case r of
                Right () -> pure ()
                Left e -> say (uncurry errorLine (classify e))
              putMVar finished ()
            takeMVar finished

serve :: Params -> IO ()
serve p = do
  listener <- socket AF_INET Stream defaultProtocol
  setSocketOption listener ReuseAddr 1
  bound <- try (bind listener (SockAddrInet (fromIntegral (pPort p)) 0))
  case bound of
    Left (e :: IOException) ->
      failWith Resource ("the server cannot listen on port " ++ show (pPort p) ++ " (" ++ show e ++ "): give another port, or port = 0 for any free one")
    Right () -> pure ()
  listen listener 1024
  port <- socketPort listener
  say (object ["type" .= ("listening" :: Text), "port" .= (fromIntegral port :: Int)])
  results <- newChan
  forM_ [1 .. pSockets p] $ \_ -> do
    (conn, _) <- accept listener
    setSocketOption conn NoDelay 1
    void . forkIO $ do
      r <- try (serveOne p conn) `finally` close conn
      writeChan results (r :: Either SomeException (Int64, Int64))
  close listener
  got <- replicateM (pSockets p) (readChan results)
  case [e | Left e <- got] of
    (e : _) -> failWith Internal ("a server connection failed: " ++ displayException e)
    [] -> do
      let total = foldr (\(m, b) (am, ab) -> (am + m, ab + b)) (0, 0) [x | Right x <- got]
      say (object ["type" .= ("served" :: Text), "messages" .= fst total, "bytes" .= snd total])

-- | echo: read each frame whole and send it back; flow: read and discard,
-- then ack. Both end when the client shuts its side down.
serveOne :: Params -> Socket -> IO (Int64, Int64)
serveOne p conn = do
  r <- newReader conn
  let loop !msgs !bytes = do
        h <- readExact r headerBytes
        case h of
          Nothing -> pure (msgs, bytes)
          Just hb -> do
            let n = readHeader hb
            when (n /= pSize p) $ ioError (userError ("a frame of " ++ show n ++ " bytes, not " ++ show (pSize p)))
            if pFlow p
              then skipExact r n
              else do
                body <- readExact r n
                maybe (ioError (userError "the stream ended inside a frame")) (\b -> sendMany conn [hb, b]) body
            loop (msgs + 1) (bytes + fromIntegral n)
  out <- loop 0 0
  when (pFlow p) $ sendAll conn (B.singleton ackByte)
  pure out

-- The client -------------------------------------------------------------

data Peer = Peer {peerIn :: Handle, peerLines :: Chan (Maybe B.ByteString), peerProc :: ProcessHandle}

startPeer :: Request -> Params -> IO (Peer, String)
startPeer req p = do
  command <- lookupEnv "MSGBENCH_PEER_COMMAND"
  cwd' <- lookupEnv "MSGBENCH_PEER_CWD"
  host <- maybe "127.0.0.1" (\h -> if null h then "127.0.0.1" else h) <$> lookupEnv "MSGBENCH_PEER_HOST"
  argv <- case command of
    Nothing
      | pRemote p -> failWith Unsupported "placement = remote needs the harness to place the server (MSGBENCH_PEER_COMMAND is not set)"
      | otherwise -> (\self -> [self, "--serve"]) <$> getExecutablePath
    Just c -> case decodeStrict' (BC.pack c) of
      Just (a : rest) -> pure (a : rest)
      _ -> failWith Internal ("MSGBENCH_PEER_COMMAND = " ++ show c ++ " is not a JSON array of strings naming a command")
  started <- try $
    createProcess
      (proc (head argv) (tail argv)) {cwd = if cwd' == Just "" then Nothing else cwd', std_in = CreatePipe, std_out = CreatePipe, std_err = Inherit}
  case started of
    Left (e :: IOException) -> failWith Internal ("cannot start the server " ++ show argv ++ ": " ++ show e)
    Right (Just hin, Just hout, _, ph) -> do
      lines' <- newChan
      void . forkIO $ do
        let loop = do
              l <- try (BC.hGetLine hout)
              case l of
                Left (_ :: IOException) -> writeChan lines' Nothing
                Right x -> writeChan lines' (Just x) >> loop
        loop
      B.hPut hin (reqRaw req <> "\n")
      hFlush hin
      pure (Peer hin lines' ph, host)
    Right _ -> failWith Internal "cannot make pipes for the server"

-- | The next line of the server: the wanted type, else an error.
next :: Peer -> Text -> Int -> IO (KM.KeyMap Value)
next peer want seconds = do
  got <- timeout (seconds * 1000000) (readChan (peerLines peer))
  case got of
    Nothing -> failWith Internal ("the server did not say " ++ show want ++ " within " ++ show seconds ++ " s")
    Just Nothing -> failWith Internal ("the server exited without saying " ++ show want)
    Just (Just l) | B.null (BC.strip l) -> next peer want seconds
    Just (Just l) -> case decodeStrict' l of
      Just (Object o) -> case KM.lookup "type" o of
        Just (String "error") -> do
          let kind = case KM.lookup "kind" o of
                Just (String "unsupported") -> Unsupported
                Just (String "resource") -> Resource
                _ -> Internal
              msg = case KM.lookup "message" o of
                Just (String m) -> T.unpack m
                _ -> "(no message)"
          failWith kind ("the server: " ++ msg)
        Just (String t) | t == want -> pure o
        _ -> failWith Internal ("the server said " ++ BC.unpack l ++ " where " ++ show want ++ " was due")
      _ -> failWith Internal ("the server printed a line that is not a JSON object: " ++ take 200 (BC.unpack l))

intField :: KM.KeyMap Value -> Text -> Int64
intField o k = case KM.lookup (Key.fromText k) o of
  Just (Number n) -> fromMaybe 0 (toBoundedInteger n)
  _ -> 0

stopPeer :: Peer -> IO ()
stopPeer peer = do
  void (try (hClose (peerIn peer)) :: IO (Either IOException ()))
  exited <- timeout 5000000 (waitForProcess (peerProc peer))
  case exited of
    Just _ -> pure ()
    Nothing -> terminateProcess (peerProc peer) >> void (waitForProcess (peerProc peer))

-- | One socket's counts; in open loop also its latencies from each message's
-- due time (by 'bucket') and the largest.
data Client = Client
  { cElapsed :: !Int64, cSent, cSentBytes, cRecv, cRecvBytes, cMismatch :: !Int64
  , cLatency :: !(IM.IntMap Int64), cLatencyMax :: !Int64 }

measureSocket :: Request -> IO Result
measureSocket req = do
  optionsKnown req []
  p <- parseParams req
  bracket (startPeer req p) (stopPeer . fst) $ \(peer, host) -> do
    listening <- next peer "listening" 30
    let port = intField listening "port"
        messages = messagesOf p
        nFrames = frameCount (pSize p) messages
        frames = V.fromList [header (pSize p) <> B.replicate (pSize p) (bucketFill nFrames (fromIntegral v)) | v <- [0 .. nFrames - 1]]
        pickFrame i = frames V.! fromIntegral (i `mod` fromIntegral nFrames)
    addr : _ <- getAddrInfo (Just defaultHints {addrSocketType = Stream}) (Just host) (Just (show port))
    conns <- forM [1 .. pSockets p] $ \_ -> do
      s <- socket (addrFamily addr) Stream defaultProtocol
      setSocketOption s NoDelay 1
      connect s (addrAddress addr)
      pure s
    release <- newEmptyMVar
    done <- newChan
    forM_ conns $ \s -> forkIO $ do
      readMVar release
      r <- try (if pRate p > 0 && not (pFlow p) then runEchoPaced p s messages pickFrame else runClient p s messages pickFrame)
      writeChan done r
    t0 <- nowNs
    putMVar release ()
    outcomes <- replicateM (pSockets p) (readChan done)
    t1 <- nowNs
    mapM_ close conns
    clients <- case [e | Left e <- outcomes] of
      (e : _) -> throwIO (e :: SomeException)
      [] -> pure [c | Right c <- outcomes]
    served <- next peer "served" 30
    ex <- timeout 10000000 (waitForProcess (peerProc peer))
    case ex of
      Just (ExitFailure c) -> failWith Internal ("the server exited with status " ++ show c)
      _ -> pure ()
    rss <- peakRssBytes
    let sumOf f = sum (map f clients)
        (received, receivedBytes)
          | pFlow p = (intField served "messages", intField served "bytes")
          | otherwise = (sumOf cRecv, sumOf cRecvBytes)
        paced = pRate p > 0
    pure
      emptyResult
        { measured =
            [("elapsed_ns", toJSON (map cElapsed clients)), ("wall_ns", toJSON (t1 - t0)), ("peak_rss_bytes", toJSON rss)]
              ++ [("latency_max_ns", toJSON (maximum (0 : map cLatencyMax clients))) | paced]
        , verify =
            [ ("messages_sent", sumOf cSent), ("messages_received", received), ("bytes_sent", sumOf cSentBytes)
            , ("bytes_received", receivedBytes), ("content_mismatches", sumOf cMismatch) ]
        , histograms = [("latency_ns", IM.toAscList (IM.unionsWith (+) (map cLatency clients))) | paced]
        }

runClient :: Params -> Socket -> Int64 -> (Int64 -> B.ByteString) -> IO Client
runClient p s messages frame = do
  r <- newReader s
  let size = pSize p
  t0 <- nowNs
  if pFlow p
    then do
      forM_ [0 .. messages - 1] $ \i -> sendAll s (frame i)
      shutdown s ShutdownSend
      ack <- recv s 1
      t1 <- nowNs
      unless (ack == B.singleton ackByte) $ failWith Internal ("the server acked with " ++ show ack)
      pure (Client (t1 - t0) messages (messages * fromIntegral size) 0 0 0 IM.empty 0)
    else do
      mismatches <- newIORef (0 :: Int64)
      let loop !i !got
            | i >= messages = pure got
            | otherwise = do
                let f = frame i
                sendAll s f
                back <- readExact r (headerBytes + size)
                case back of
                  Nothing -> failWith Internal "the server closed the connection before echoing every message"
                  Just b -> do
                    unless (echoMatches p f b) $ modifyIORef' mismatches (+ 1)
                    loop (i + 1) (got + 1)
      got <- loop 0 0
      t1 <- nowNs
      shutdown s ShutdownSend
      m <- readIORef mismatches
      pure (Client (t1 - t0) messages (messages * fromIntegral size) got (got * fromIntegral size) m IM.empty 0)

-- | Whether echo b is frame f: whole (check_content), or its length, first and
-- last byte.
echoMatches :: Params -> B.ByteString -> B.ByteString -> Bool
echoMatches p f b
  | pCheck p = b == f
  | otherwise = B.length b == B.length f && B.index b headerBytes == B.index f headerBytes && B.last b == B.last f

-- | Echo in open loop: a writer thread sends message i at its due time, rate /
-- sockets a second from its first send, never waiting for echoes (late, it
-- sends at once; it never skips); this thread reads the echoes in order,
-- checks each as the closed loop does and records its latency from its
-- message's due time, so a client or server that falls behind is charged for
-- the wait it caused.
runEchoPaced :: Params -> Socket -> Int64 -> (Int64 -> B.ByteString) -> IO Client
runEchoPaced p s messages frame = do
  r <- newReader s
  let size = pSize p
      perSocket = pRate p / fromIntegral (pSockets p)
  started <- newEmptyMVar
  written <- newEmptyMVar
  writer <- flip forkFinally (putMVar written) $ do
    t0 <- nowNs
    putMVar started t0
    let schedule = pacer t0 perSocket
    -- On a failure the reader, waiting for an echo that cannot come, fails now.
    forM_ [0 .. messages - 1] (\i -> waitUntil (due schedule i) >> sendAll s (frame i))
      `onException` shutdownQuietly s
  t0 <- readMVar started
  let schedule = pacer t0 perSocket
      loop !i !mismatches !hist !worst !lastT
        | i >= messages = pure (mismatches, hist, worst, lastT)
        | otherwise = do
            back <- readExact r (headerBytes + size)
            t <- nowNs
            case back of
              Nothing -> failWith Internal "the server closed the connection before echoing every message"
              Just b -> do
                let lat = t - due schedule i
                loop (i + 1) (if echoMatches p (frame i) b then mismatches else mismatches + 1)
                  (IM.insertWith (+) (bucket lat) 1 hist) (max worst lat) t
  outcome <- try (loop 0 0 IM.empty 0 t0)
  case outcome of
    Left (e :: SomeException) -> do
      killThread writer -- it stops in its wait or its blocked send
      w <- takeMVar written
      -- A writer that failed first closed the socket: its failure is the cause.
      case w of
        Left we | not (isKilled we) -> throwIO we
        _ -> throwIO e
    Right (m, hist, worst, t1) -> do
      takeMVar written >>= either throwIO pure
      shutdown s ShutdownSend
      let bytes = messages * fromIntegral size
      pure (Client (t1 - t0) messages bytes messages bytes m hist worst)
  where
    isKilled e = case fromException e of
      Just ThreadKilled -> True
      _ -> False

shutdownQuietly :: Socket -> IO ()
shutdownQuietly s = void (try (shutdown s ShutdownBoth) :: IO (Either IOException ()))
