{-# LANGUAGE OverloadedStrings, ScopedTypeVariables #-}
-- | One measurement from request to report: hello first, then a result or an
-- error. A worker's main hands 'worker' its name and its workloads, nothing else.
module Msgbench.Worker (worker, runtimeVersion) where

import Control.Concurrent (getNumCapabilities)
import Control.Exception (IOException, try)
import qualified Data.ByteString.Char8 as BC
import Data.Text (Text)
import qualified Data.Text as T
import Data.Version (showVersion)
import Msgbench.Protocol
import System.IO (BufferMode (..), hSetBinaryMode, hSetBuffering, stdin, stdout)
import System.Info (fullCompilerVersion)

-- | The whole worker: reads the request line on stdin, says hello, runs the
-- workload the request names and says its result; any exception it throws
-- is its error line ('classify').
worker :: Text -> [(Text, Request -> IO Result)] -> IO ()
worker target workloads = do
  hSetBinaryMode stdout True
  hSetBuffering stdout (BlockBuffering Nothing)
  version <- runtimeVersion
  line <- try (BC.hGetLine stdin)
  case either (\(e :: IOException) -> Left (show e)) readRequest line of
    Left e -> do
      say (helloLine target version "unknown")
      say (errorLine Internal ("cannot read the request: " ++ e))
    Right req -> do
      say (helloLine target version (if T.null (reqVariant req) then "unknown" else reqVariant req))
      case lookup (reqWorkload req) workloads of
        Nothing ->
          say . errorLine Unsupported $
            "workload " ++ show (reqWorkload req) ++ " is not implemented by " ++ T.unpack target
              ++ " (implemented: " ++ T.unpack (T.intercalate ", " (map fst workloads)) ++ ")"
        Just run -> try (run req) >>= say . either (uncurry errorLine . classify) resultLine

-- | hello's runtime: the compiler and the capabilities the RTS runs with,
-- e.g. "GHC 9.0.2 (+RTS -N2)".
runtimeVersion :: IO Text
runtimeVersion = do
  caps <- getNumCapabilities
  pure (T.pack ("GHC " ++ showVersion fullCompilerVersion ++ " (+RTS -N" ++ show caps ++ ")"))
