{-# LANGUAGE OverloadedStrings, ScopedTypeVariables #-}
-- | The kit's own tests (make test), a plain main as targets/ghc's tests: the
-- bucket function against the harness's vectors, the request, options, the
-- lines, and samples.
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Exception (ErrorCall (..), SomeException, finally, throwIO, toException, try)
import Control.Monad (unless)
import Data.Aeson (Value (..), decodeStrict', encode)
import qualified Data.Aeson.KeyMap as KM
import qualified Data.ByteString.Char8 as BC
import qualified Data.ByteString.Lazy.Char8 as BL
import Data.Either (isLeft)
import Data.IORef (modifyIORef', newIORef, readIORef)
import Data.Int (Int64)
import Data.List (isInfixOf)
import Data.Maybe (isNothing, mapMaybe)
import qualified Data.Text as T
import qualified Data.Text.IO as TIO
import Msgbench.Check (check, finish, newCounter)
import Msgbench.Histogram (bucket)
import Msgbench.Measure (nowNs)
import Msgbench.Options
import Msgbench.Pacer (due, pacer, waitUntil)
import Msgbench.Protocol
import Msgbench.Sample (processValues, rtsValues, sampled)
import Msgbench.Worker (runtimeVersion)
import System.Directory (getTemporaryDirectory, removeFile)
import GHC.IO.Handle (hDuplicate, hDuplicateTo)
import System.IO (hClose, hFlush, openTempFile, stdout)
import System.Timeout (timeout)


-- | The vectors every language's bucket function is tested against, read from
-- the harness's test (tests/test_histogram.py) so there is one copy.
vectors :: IO [(Int64, Int)]
vectors = do
  text <- TIO.readFile "../../tests/test_histogram.py"
  let list = T.takeWhile (/= ']') (snd (T.breakOn "[" (snd (T.breakOn "VECTORS = [" text))))
      pair p = case T.splitOn ", " (T.takeWhile (/= ')') p) of
        [v, b] -> Just (value (T.strip v), read (T.unpack (T.strip b)))
        _ -> Nothing
      value v = case T.splitOn "**" v of
        [base, ex] -> read (T.unpack base) ^ (read (T.unpack ex) :: Int)
        _ -> read (T.unpack v)
  pure (mapMaybe pair (drop 1 (T.splitOn "(" list)))

-- | What an action throws as a worker error, if anything.
thrown :: IO a -> IO (Maybe (Kind, String))
thrown act = either (Just . classify) (const Nothing) <$> try act

-- | Runs act with stdout going to a temporary file; its lines.
captured :: IO a -> IO (a, [BC.ByteString])
captured act = do
  dir <- getTemporaryDirectory
  (path, h) <- openTempFile dir "msgbench-ghc-kit.out"
  saved <- hDuplicate stdout
  hDuplicateTo h stdout
  r <- act `finally` (hFlush stdout >> hDuplicateTo saved stdout >> hClose saved >> hClose h)
  out <- BC.readFile path
  removeFile path
  pure (r, BC.lines out)

request :: BC.ByteString -> Request
request line = either error id (readRequest line)

main :: IO ()
main = do
  counter <- newCounter
  let ok = check counter
  vs <- vectors
  ok ("the harness's vectors read: " ++ show (length vs)) (length vs >= 10)
  mapM_ (\(v, i) -> ok ("bucket " ++ show v ++ " = " ++ show i ++ ", got " ++ show (bucket v)) (bucket v == i)) vs
  ok "a negative value counts as 0" (bucket (-5) == 0)
  let thirds = pacer 1000 3
  ok "pacer: due 0 is the start, then a third of a second apart without drift"
    (due thirds 0 == 1000 && due thirds 1 == 1000 + 333333333 && due thirds 3 == 1000 + 1000000000)
  t0 <- nowNs
  let fast = pacer t0 10000 -- 100 us apart: the spin decides
  early <- mapM (\i -> waitUntil (due fast i) >> (< due fast i) <$> nowNs) [0 .. 19]
  t1 <- nowNs
  ok "pacer: waitUntil never returns before the due time" (not (or early))
  ok ("pacer: 20 events at 10,000/s take >= 1.9 ms: " ++ show (t1 - t0)) (t1 - t0 >= 1900000)

  let req = request "{\"workload\":\"fanin\",\"variant\":\"stm\",\"options\":{\"queue\":\"tbqueue\",\"share\":true},\"params\":{\"n\":3},\"repetition\":1}"
  ok "the request's workload, variant, options" (reqWorkload req == "fanin" && reqVariant req == "stm" && KM.size (reqOptions req) == 2)
  ok "a request that is not an object is refused" (isLeft (readRequest "[1]"))
  ok "options that are not an object are refused" (isLeft (readRequest "{\"options\":3}"))
  ok "a request that is not JSON is refused" (isLeft (readRequest "{\"workload\":"))
  n <- param req "n"
  ok "a param read by type" (n == (3 :: Int))
  missing <- thrown (param req "m" :: IO Int)
  ok "a missing param is internal, naming it" (fmap fst missing == Just Internal && maybe False (("params.m" `isInfixOf`) . snd) missing)

  unknown <- thrown (optionsKnown req ["queue"])
  ok ("an unknown option is internal, naming it and what is known: " ++ show unknown)
    (unknown == Just (Internal, "unknown option share for workload fanin (known here: queue)"))
  none <- thrown (optionsKnown (request "{\"workload\":\"ring\",\"options\":{\"b\":1,\"a\":2}}") [])
  ok ("unknown options sorted; none known: " ++ show none)
    (none == Just (Internal, "unknown option a, b for workload ring (known here: none)"))
  known <- thrown (optionsKnown req ["share", "queue"])
  ok "known options pass" (isNothing known)
  q <- optionText req "queue" "bchan"
  absent <- optionText req "mailbox" "bounded"
  share <- optionBool req "share"
  unset <- optionBool req "nothing"
  ok "options read by kind, defaults when absent" (q == "tbqueue" && absent == "bounded" && share && not unset)
  wrongBool <- thrown (optionBool req "queue")
  wrongText <- thrown (optionText req "share" "x")
  ok ("an option of the wrong kind is internal, naming it: " ++ show (wrongBool, wrongText))
    ( wrongBool == Just (Internal, "option queue = \"tbqueue\": expected true or false")
        && wrongText == Just (Internal, "option share = true: expected a string") )

  ok "a worker error keeps its kind" (classify (toException (WorkerError Resource "no memory")) == (Resource, "no memory"))
  ok "any other exception is internal" (fst (classify (toException (ErrorCall "bug"))) == Internal)
  let encoded = BL.unpack . encode
  ok "a result without histograms has no histograms key"
    (encoded (resultLine emptyResult {verify = [("hops", 7)]}) == "{\"measured\":{},\"type\":\"result\",\"verify\":{\"hops\":7}}")
  ok "histograms are sparse [index, count] pairs"
    ("\"histograms\":{\"latency_ns\":[[3,1],[317,2]]}" `isInfixOf` encoded (resultLine emptyResult {histograms = [("latency_ns", [(3, 1), (317, 2)])]}))
  ok "a progress line" (encoded (progressLine 3 10) == "{\"done\":3,\"total\":10,\"type\":\"progress\"}")
  ok "a sample line" (encoded (sampleLine 1.5 [("rss_bytes", 4096)]) == "{\"t_ms\":1.5,\"type\":\"sample\",\"values\":{\"rss_bytes\":4096}}")
  ok "a hello line" (encoded (helloLine "ghc" "GHC 9" "default") == "{\"runtime_version\":\"GHC 9\",\"target\":\"ghc\",\"type\":\"hello\",\"variant\":\"default\"}")
  ok "an error line" (encoded (errorLine Unsupported "no") == "{\"kind\":\"unsupported\",\"message\":\"no\",\"type\":\"error\"}")

  -- The work waits for the sampler's third sample rather than for a time, so the test
  -- holds on a loaded machine (5 s at most: a sampler that stops early fails, not hangs);
  -- the period is checked as the gaps between samples.
  calls <- newIORef (0 :: Int)
  let counted = modifyIORef' calls (+ 1) >> rtsValues
      waitFor k = readIORef calls >>= \c -> unless (c >= k) (threadDelay 1000 >> waitFor k)
  (answer, written) <- captured (sampled 20000 counted (timeout 5000000 (waitFor 3) >> pure (42 :: Int)))
  let samples = mapMaybe decodeStrict' written :: [Value]
      field k (Object o) = KM.lookup k o
      field _ _ = Nothing
      times = [t | Just (Number t) <- map (field "t_ms") samples]
      names = [k | Just (Object vals) <- map (field "values") samples, k <- map show (KM.keys vals)]
  ok "sampled returns what the work returned" (answer == 42)
  ok ("samples: one at once, one every period, one at the end: " ++ show times)
    ( length samples == length written && length times >= 4 && head times < 1000
        && all (>= 20) (zipWith (-) (drop 1 times) (take 2 times)) && and (zipWith (<=) times (drop 1 times)) )
  ok ("every sample value's name ends in its unit: " ++ show (take 8 names))
    (not (null names) && all (\k -> any (`isSuffixOf'` k) ["_bytes\"", "_count\"", "_ns\""]) names)
  process <- processValues
  ok "process values: RSS, peak RSS, CPU, all > 0" (map fst process == ["rss_bytes", "peak_rss_bytes", "cpu_ns"] && all ((> 0) . snd) process)
  (failed, _) <- captured (try (sampled 20000 processValues (throwIO (ErrorCall "work failed") :: IO ())))
  ok "a failing work's exception comes through sampled" (either (\(e :: SomeException) -> "work failed" `isInfixOf` show e) (const False) failed)

  version <- runtimeVersion
  ok ("hello's runtime names GHC and the capabilities: " ++ T.unpack version) ("GHC 9." `T.isPrefixOf` version && "(+RTS -N" `T.isInfixOf` version)

  finish counter
  where
    isSuffixOf' suffix s = reverse suffix == take (length suffix) (reverse s)
