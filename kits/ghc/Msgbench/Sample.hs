{-# LANGUAGE OverloadedStrings #-}
-- | Sample lines (spec/message.schema.json): the worker's own view of itself
-- about once a second while a measurement runs, from a thread of its own,
-- never from the measured threads.
module Msgbench.Sample (sampled, period, processValues, rtsValues) where

import Control.Concurrent (forkIO)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, readMVar, takeMVar)
import Control.Exception (IOException, finally, handle)
import Control.Monad (void)
import Data.Text (Text)
import GHC.Stats
import Msgbench.Measure (cpuNs, nowNs, peakRssBytes, rssBytes)
import Msgbench.Protocol (sampleLine, say)
import System.Timeout (timeout)

-- | How often a sampled measurement writes a sample line: 1 s, in microseconds.
period :: Int
period = 1000000

-- | Runs work while a thread writes a sample of collect every periodUs: the
-- first at once, the last after work returned. The sampler is stopped by a
-- signal it waits for, not killed, so it never leaves half a line.
sampled :: Int -> IO [(Text, Double)] -> IO a -> IO a
sampled periodUs collect work = do
  start <- nowNs
  stop <- newEmptyMVar
  stopped <- newEmptyMVar
  let emit = handle ignore $ do
        t <- nowNs
        values <- collect
        say (sampleLine (fromIntegral (t - start) / 1e6) values)
      loop = emit >> timeout periodUs (readMVar stop) >>= maybe loop pure
  void (forkIO (loop `finally` putMVar stopped ()))
  result <- work `finally` (putMVar stop () >> takeMVar stopped)
  emit
  pure result
  where
    -- a worker whose stdout is gone fails on its result line; a sample need not
    ignore :: IOException -> IO ()
    ignore _ = pure ()

-- | RSS, its peak and the process's CPU time.
processValues :: IO [(Text, Double)]
processValues = do
  rss <- rssBytes
  peak <- peakRssBytes
  cpu <- cpuNs
  pure [("rss_bytes", fromIntegral rss), ("peak_rss_bytes", fromIntegral peak), ("cpu_ns", fromIntegral cpu)]

-- | 'processValues' and the RTS's own view as of the last GC (GHC.Stats, on
-- when the binary runs with +RTS -T): the heap's live bytes, the memory the
-- RTS holds, GCs so far, their CPU time and the bytes allocated.
rtsValues :: IO [(Text, Double)]
rtsValues = do
  process <- processValues
  enabled <- getRTSStatsEnabled
  if not enabled
    then pure process
    else do
      s <- getRTSStats
      pure $
        process
          ++ [ ("ghc_heap_live_bytes", fromIntegral (gcdetails_live_bytes (gc s)))
             , ("ghc_mem_in_use_bytes", fromIntegral (gcdetails_mem_in_use_bytes (gc s)))
             , ("ghc_gc_count", fromIntegral (gcs s))
             , ("ghc_gc_cpu_ns", fromIntegral (gc_cpu_ns s))
             , ("ghc_allocated_bytes", fromIntegral (allocated_bytes s)) ]
