{-# LANGUAGE OverloadedStrings #-}
-- | The msgbench worker for GHC: one request on stdin, JSON lines on stdout.
-- With --serve it is the server half of the socket workload.
module Main (main) where

import Control.Concurrent (getNumCapabilities)
import Control.Exception (SomeException, displayException, fromException, try)
import qualified Data.ByteString.Char8 as BC
import qualified Data.Text as T
import Protocol
import Chat (measureChat)
import Fanin (measureFanin)
import Ring (measureRing)
import Socket (measureSocket, serveMain)
import System.Environment (getArgs)
import System.Info (fullCompilerVersion)
import Data.Version (showVersion)
import System.IO (BufferMode (..), hSetBinaryMode, hSetBuffering, stdout)

workloads :: [(T.Text, Request -> IO Result)]
workloads =
  [ ("ring", measureRing)
  , ("fanin", measureFanin)
  , ("socket", measureSocket)
  , ("chat", measureChat)
  ]

main :: IO ()
main = do
  hSetBinaryMode stdout True
  hSetBuffering stdout (BlockBuffering Nothing)
  args <- getArgs
  if "--serve" `elem` args then serveMain else workerMain

workerMain :: IO ()
workerMain = do
  line <- BC.getLine
  caps <- getNumCapabilities
  let version = T.pack ("GHC " ++ showVersion fullCompilerVersion ++ " (+RTS -N" ++ show caps ++ ")")
  case readRequest line of
    Left e -> do
      say (helloLine version "unknown")
      say (errorLine Internal ("cannot read the request: " ++ e))
    Right req -> do
      say (helloLine version (if T.null (reqVariant req) then "unknown" else reqVariant req))
      case lookup (reqWorkload req) workloads of
        Nothing ->
          say . errorLine Unsupported $
            "workload " ++ show (reqWorkload req) ++ " is not implemented by ghc (implemented: "
              ++ T.unpack (T.intercalate ", " (map fst workloads)) ++ ")"
        Just run -> do
          outcome <- try (run req)
          case outcome of
            Right r -> say (resultLine r)
            Left e -> say (uncurry errorLine (classify e))

classify :: SomeException -> (Kind, String)
classify e = case fromException e of
  Just (WorkerError k msg) -> (k, msg)
  Nothing -> (Internal, "uncaught exception: " ++ displayException e)
